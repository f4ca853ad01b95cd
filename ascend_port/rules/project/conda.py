"""conda environment files (``environment.yml``, ``conda*.yml``): the CUDA packages of ``dependencies``, the ``nvidia``
channel, and the ``pip:`` sub-list, which pip reads as a requirements file (NPU600-NPU603, NPU640).

torch_npu has no conda package (Ascend publishes it on PyPI and as wheels only), so nothing is added to the conda
list: a CUDA build of pytorch gets a TODO that says to install torch and torch-npu with pip. CUDA runtime
packages (cudatoolkit, cudnn, nccl, pytorch-cuda, cuda-*) are commented out: nothing on an NPU host uses them.
Only block-sequence items alone on their line are edited (the line is commented out, as in requirements files);
the file is read again and must hold exactly the intended values. A YAML file named like this that is not a conda
environment (no ``dependencies`` list) is ported as a config.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.cuda_packages import conda_removal_reason
from ascend_port.core.options import PortOptions
from ascend_port.core.porting import Ported, PortError
from ascend_port.core.selection import Selection
from ascend_port.core.sources import decode_text
from ascend_port.formats.requirement import parse_requirement
from ascend_port.formats.textedit import Edit, LineIndex, TextPort, newline_of
from ascend_port.rules.project.configs import _load_yaml, _plain, port_yaml
from ascend_port.rules.project.requirements import (
    CUDA_ONLY_DEPENDENCY,
    TORCH_NPU_DEPENDENCY,
    TRITON_ASCEND_DEPENDENCY,
    torch_npu_verdict,
    verdict,
)
from ascend_port.rules.project.requirements_txt import CPU_BUILD, CUDA_INDEX, CUDA_LOCAL, CUDA_TORCH_BUILD

CONDA_NVIDIA_CHANNEL = rule(
    "NPU640",
    "conda-nvidia-channel",
    Confidence.LOW,
    "The `nvidia` channel of a conda environment file: TODO, it serves only CUDA packages.",
    """
    The `nvidia` channel holds the CUDA toolkit and the libraries that `pytorch-cuda` pulls in; an NPU host needs
    none of them (CANN is installed on the host, torch and torch-npu come from pip). The channel stays until the
    CUDA build of pytorch is gone from the file (NPU603), then drop it. The CUDA packages themselves are
    commented out by NPU600.

    Before:
        channels:
          - pytorch
          - nvidia
        dependencies:
          - python=3.10
          - cudatoolkit=11.8
    After:
        channels:
          - pytorch
          # TODO(ascend-port): NPU640 [low] the nvidia channel serves CUDA packages only; ...
          - nvidia
        dependencies:
          - python=3.10
          # - cudatoolkit=11.8  # removed by ascend-port NPU600: CUDA toolkit; CANN provides the Ascend runtime
    """,
    example_file="environment.yml",
)

_CHANNEL_MESSAGE = (
    "the nvidia channel serves CUDA packages only; drop it once torch comes from pip (torch_npu needs the CPU "
    "build of torch, and the CUDA packages are gone)"
)
_SPEC = re.compile(r"^(?:(?P<channel>[\w.-]+)::)?(?P<name>[A-Za-z0-9_][A-Za-z0-9_.-]*)\s*(?P<rest>.*)$")


def _is_cuda_pytorch(name: str, rest: str, channels: list[str], names: set[str]) -> bool:
    """A conda pytorch that is a CUDA build: a CUDA build string, or CUDA packages or the nvidia channel beside it
    (without ``cpuonly``), or conda-forge's pytorch-gpu."""
    if name == "pytorch-gpu":
        return True
    if name != "pytorch":
        return False
    if re.search(r"cuda|cu\d{2,3}", rest):
        return True
    cuda_beside = "nvidia" in channels or bool(names & {"pytorch-cuda", "cudatoolkit", "cuda-toolkit"})
    return cuda_beside and "cpuonly" not in names


@dataclass
class _Seq:
    """One block sequence of the file: the items to comment out, to add after, and the values it must then hold."""

    path: tuple
    values: list[Any]
    removed: set[int] = field(default_factory=set)
    inserted: tuple[int, str] | None = None
    replaced: dict[int, str] = field(default_factory=dict)

    def expected(self) -> list[Any]:
        out: list[Any] = []
        for i, value in enumerate(self.values):
            if i not in self.removed:
                out.append(self.replaced.get(i, value))
            if self.inserted and self.inserted[0] == i:
                out.append(self.inserted[1])
        return out


class _CondaPort:
    def __init__(self, text: str, selection: Selection, document: Mapping) -> None:
        self.port = TextPort(text, selection)
        self.text = text
        self.lines = LineIndex(text)
        self.newline = newline_of(text)
        self.document = document
        channels = document.get("channels")
        self.channels = [c for c in channels if isinstance(c, str)] if isinstance(channels, list) else []
        self.seqs: list[_Seq] = []

    def item_offset(self, seq: Any, i: int) -> int:
        line, col = seq.lc.item(i)
        return self.lines.starts[line] + col

    def alone(self, offset: int, value: str) -> bool:
        """Is the item a plain scalar written as ``- value`` alone on its line (a trailing comment allowed)?"""
        start = self.lines.line_start(offset)
        end = self.lines.line_end(offset)
        before, after = self.text[start:offset], self.text[offset + len(value) : end]
        return (
            self.text.startswith(value, offset)
            and re.fullmatch(r"[ \t]*-[ \t]+", before) is not None
            and re.fullmatch(r"[ \t]*(?:#.*)?", after) is not None
        )

    def comment_out(self, seq: _Seq, node: Any, i: int, reason: str, rule, message: str) -> None:
        offset = self.item_offset(node, i)
        value = node[i]
        if not self.alone(offset, value) or len(seq.removed) + 1 >= len(seq.values):
            self.port.report(rule, offset, f"{message}; remove it by hand")
            return
        dash = self.lines.line_start(offset) + len(self.lines.indent_at(offset))
        end = self.lines.line_end(offset)
        note = f"removed by ascend-port {CUDA_ONLY_DEPENDENCY.id}: {reason}"
        if self.port.fix(rule, offset, [Edit(dash, end, f"# {self.text[dash:end]}  # {note}")], message):
            seq.removed.add(i)

    def run(self) -> TextPort:
        channels = self.document.get("channels")
        if isinstance(channels, list):
            for i, channel in enumerate(channels):
                if channel == "nvidia":
                    self.port.todo(CONDA_NVIDIA_CHANNEL, self.item_offset(channels, i), _CHANNEL_MESSAGE)
        deps = self.document.get("dependencies")
        if isinstance(deps, list):
            self.conda_list(deps)
            for j, item in enumerate(deps):
                if isinstance(item, dict) and isinstance(item.get("pip"), list):
                    self.pip_list(j, item["pip"])
        self.verify()
        return self.port

    def conda_list(self, deps: Any) -> None:
        seq = _Seq(("dependencies",), list(deps))
        self.seqs.append(seq)
        names = {m.group("name").lower() for item in deps if isinstance(item, str) and (m := _SPEC.match(item.strip()))}
        for i, item in enumerate(deps):
            if not isinstance(item, str) or not (m := _SPEC.match(item.strip())):
                continue
            name, rest = m.group("name"), m.group("rest")
            offset = self.item_offset(deps, i)
            if _is_cuda_pytorch(name.lower(), rest, self.channels, names):
                self.port.todo(
                    CUDA_TORCH_BUILD,
                    offset,
                    f"{item} is a CUDA build of torch, and torch-npu has no conda package: install torch (the CPU "
                    "build) and torch-npu of the same release with pip, under pip:",
                )
            elif (reason := conda_removal_reason(name)) is not None:
                self.comment_out(seq, deps, i, reason, CUDA_ONLY_DEPENDENCY, f"{name} removed: {reason}")
            elif name.lower() == "pytorch" and not self.lists_torch_npu(deps):
                self.port.report(
                    TORCH_NPU_DEPENDENCY,
                    offset,
                    "torch-npu has no conda package: add torch-npu (the release of this pytorch) to a pip: list",
                )

    @staticmethod
    def lists_torch_npu(deps: Any) -> bool:
        pips = [item["pip"] for item in deps if isinstance(item, dict) and isinstance(item.get("pip"), list)]
        return any(isinstance(r, str) and re.match(r"(?i)torch[-_.]npu\b", r.strip()) for pip in pips for r in pip)

    def pip_list(self, j: int, pip: Any) -> None:
        """The ``pip:`` sub-list: a requirements file, one requirement or option per item."""
        seq = _Seq(("dependencies", j, "pip"), list(pip))
        self.seqs.append(seq)
        parsed = []
        for i, item in enumerate(pip):
            if not isinstance(item, str):
                continue
            offset = self.item_offset(pip, i)
            option = re.match(r"^(?:-i|--index-url|--extra-index-url|-f|--find-links)[\s=]+(\S+)", item.strip())
            if option:
                if CUDA_INDEX.search(option.group(1)):
                    self.port.todo(CUDA_TORCH_BUILD, offset, f"CUDA wheel index: {CPU_BUILD}")
                continue
            req = parse_requirement(item)
            if req is None:
                continue
            parsed.append((i, req))
            if req.key in ("torch", "torchvision", "torchaudio") and CUDA_LOCAL.search(req.specifier):
                self.port.todo(CUDA_TORCH_BUILD, offset, f"{item.strip()} is a CUDA build: {CPU_BUILD}")
            found = verdict(req)
            if found is None:
                continue
            if found.rule is CUDA_ONLY_DEPENDENCY:
                self.comment_out(seq, pip, i, found.reason, found.rule, f"{req.name} removed: {found.reason}")
            elif found.rule is TRITON_ASCEND_DEPENDENCY and self.alone(offset, item):
                end = self.lines.line_end(offset)
                new = found.new_requirement + req.marker
                note = f"  # ascend-port {TRITON_ASCEND_DEPENDENCY.id}: {found.reason}"
                edits = [Edit(offset, offset + len(item), new), Edit(end, end, note)]
                if self.port.fix(found.rule, offset, edits, f"triton -> triton-ascend ({found.reason})"):
                    seq.replaced[i] = new
        self.add_torch_npu(seq, pip, parsed)

    def add_torch_npu(self, seq: _Seq, pip: Any, parsed: list) -> None:
        placed = torch_npu_verdict([req for _, req in parsed])
        if placed is None:
            return
        index, found = placed
        i, torch = parsed[index]
        offset = self.item_offset(pip, i)
        if not found.new_requirement or not self.alone(offset, pip[i]):
            self.port.report(TORCH_NPU_DEPENDENCY, offset, found.reason if not found.new_requirement else "add it")
            return
        end = self.lines.line_end(offset)
        lead = self.text[self.lines.line_start(offset) : offset]
        new = found.new_requirement + torch.marker
        line = f"{self.newline}{lead}{new}  # added by ascend-port {TORCH_NPU_DEPENDENCY.id}: {found.reason}"
        if self.port.fix(
            TORCH_NPU_DEPENDENCY, offset, [Edit(end, end, line)], f"{found.new_requirement} added ({found.reason})"
        ):
            seq.inserted = (i, new)

    def verify(self) -> None:
        new_text = self.port.result()
        if new_text is None:
            return
        deps = self.document["dependencies"]
        conda = next(s for s in self.seqs if s.path == ("dependencies",))
        pips = {s.path[1]: s for s in self.seqs if len(s.path) == 3}
        expected_deps: list[Any] = []
        for j, item in enumerate(deps):
            if j in conda.removed:
                continue
            item = _plain(item)
            if j in pips:
                item["pip"] = _plain(pips[j].expected())
            expected_deps.append(item)
        expected = _plain(self.document)
        expected["dependencies"] = expected_deps
        if _plain(_load_yaml(new_text)[0]) != expected:
            raise PortError(
                "internal error: the edited environment file would not hold the intended values; left unchanged"
            )


def port_conda(text: str, selection: Selection) -> TextPort:
    documents = _load_yaml(text)
    document = documents[0] if len(documents) == 1 else None
    if not isinstance(document, dict) or not isinstance(document.get("dependencies"), list):
        return port_yaml(text, selection)  # named like an environment file, but a config
    return _CondaPort(text, selection, document).run()


class CondaHandler:
    def port(self, data: bytes, selection: Selection, options: PortOptions) -> Ported:
        source = decode_text(data)
        port = port_conda(source.text, selection)
        return Ported(source, port.result(), port.findings)
