"""What happens to one requirement (PEP 508 string), whatever file it is written in: the decisions behind NPU600-602.

A small reader of the requirement's name, extras, version specifier and marker, keeping the raw text of each part
so an edit changes only the part it must.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ascend_port.core import library_support, npu_api
from ascend_port.core.catalogue import Confidence, Rule, rule
from ascend_port.core.cuda_packages import FLASH_REASON, FLASH_REASON_UNPORTED, removal_reason
from ascend_port.core.findings import FileResult
from ascend_port.core.options import PortOptions
from ascend_port.core.porting import Project, ProjectStep
from ascend_port.formats.requirement import Requirement

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

# --- dependencies ---------------------------------------------------------------------------------------------

CUDA_ONLY_DEPENDENCY = rule(
    "NPU600",
    "cuda-only-dependency",
    HIGH,
    "CUDA-only packages (flash-attn, xformers, nvidia-*, cupy-cuda*, pynvml, transformer-engine, flashinfer) are "
    "commented out, saying why.",
    """
    These packages have no Ascend build: installing them fails or pulls CUDA libraries that nothing on an NPU
    host can use. The line is commented out (never deleted) with the reason and the replacement, in
    requirements/constraints files, pyproject.toml (`[project]` dependencies, optional dependencies and
    `[dependency-groups]`), setup.py and setup.cfg (`install_requires`, `extras_require`). Where an item shares a
    line with others it is removed and the comment goes on its own line above the statement. In `pip install`
    and `conda install` commands (shell scripts, Dockerfile `RUN`, Makefile recipes, notebook `!` lines) a
    CUDA-only package among others is cut out of the command with a note above it; a step that installs only
    such packages gets NPU617's TODO. Poetry's
    dependency tables (`[tool.poetry.dependencies]`, group and dev dependencies) get the line commented out, unless
    an extra names the package. conda environment files get it for the `pip:` list and, in the conda list, for
    the CUDA runtime too (`cudatoolkit`, `cudnn`, `nccl`, `pytorch-cuda`, `cuda-*`).

    Before:
        flash-attn==2.6.3
        pynvml>=11
    After:
        # flash-attn==2.6.3  # removed by ascend-port NPU600: CUDA-only; torch_npu.npu_fusion_attention replaces it
        # pynvml>=11  # removed by ascend-port NPU600: NVML bindings for NVIDIA drivers; query NPUs with npu-smi or torch.npu
    Stays (a package whose name only resembles flash-attn's):
        numpy>=1.24
        flash-attention-docs==1.0
    """,
    example_file="requirements.txt",
)
TRITON_ASCEND_DEPENDENCY = rule(
    "NPU601",
    "triton-ascend-dependency",
    MEDIUM,
    "`triton` -> `triton-ascend`; its version is dropped (triton-ascend releases follow CANN, not Triton).",
    """
    Triton kernels run on Ascend through Triton-Ascend, a separate distribution that cannot coexist with
    community Triton (installing one overwrites the other). The version of `triton` says nothing about which
    triton-ascend release matches your CANN, so the pin is dropped and the old requirement is quoted in a comment:
    pick the release for your CANN and uninstall community triton first. Kernels themselves are NPU5xx's business.

    Before:
        triton==3.1.0
    After:
        triton-ascend  # ascend-port NPU601: was triton==3.1.0; pin the triton-ascend release for your CANN ...
    """,
    example_file="requirements.txt",
)
# The extra (a dependency group, a Poetry group) that brings torch-npu where a package's core dependencies must not.
NPU_EXTRA = "npu"

TORCH_NPU_DEPENDENCY = rule(
    "NPU602",
    "torch-npu-dependency",
    HIGH,
    "Add `torch-npu` next to `torch`, pinned to the same release where torch is pinned (`torch==2.5.1` -> "
    "`torch-npu==2.5.1.*`).",
    """
    torch_npu X.Y.Z is built for torch X.Y.Z and nothing else (its wheel requires `torch==X.Y.Z.*`). Bug-fix
    releases of torch-npu are post releases of the same version (2.5.1.post1, 2.1.0.post17), so the pin is a
    prefix pin that accepts them. An unpinned torch gets an unpinned torch-npu: pip pairs them through torch-npu's
    own requirement. A torch pinned before 2.1, or to a release torch-npu never paired (torch 2.1.2, 2.7.0: the
    table of published torch-npu releases says), gets no pin that pip could not satisfy: reported with the nearest
    pairs that exist, nothing added. Nothing is added
    where torch-npu is already listed, nor in hash-checking files (add it with its hashes when you re-lock). The
    same in Poetry's dependency tables (`torch = "2.5.1"` gets `torch-npu = "2.5.1.*"`) and in the `pip:` list of
    a conda environment file (torch-npu has no conda package: a conda pytorch gets NPU603's TODO instead).
    A pyproject.toml gets it in an extra of its own, `npu` (a dependency group `npu` where it declares no project),
    paired with the core dependencies' torch or bringing the torch of the first extra that pins one: never in the
    core dependencies (every user of the package would get it, and without Ascend's CANN its autoload makes
    `import torch` fail) nor in the other extras and groups, which stay as they are (one bound to a CUDA wheel index
    installs a CUDA torch, which torch-npu refuses; a CPU one is for hosts without an NPU). Then the project's
    install commands (scripts, Dockerfiles, Makefiles) install `npu` where they installed the CUDA hosts' extra
    (`pip install -e .[gpu]`, `uv sync --extra gpu`: an extra named for CUDA or bound to a CUDA wheel index).
    Poetry: a package gets an optional group `npu` (`poetry install --with npu`), an application (`package-mode =
    false`) torch-npu beside its torch; the other groups stay as they are.
    A setup.py or setup.cfg gets the same decision as a finding on its torch requirement, naming the extra to add
    (`extras_require={"npu": [...]}`); an extra of theirs named `npu` gets torch-npu beside its torch.
    The finding says how to install it: beside the CPU build of torch (on x86_64, PyPI's torch is a CUDA build:
    `pip install .[npu]` alone resolves to it, with its nvidia-* packages, and torch_npu refuses it at import).
    A target you set (`--torch-npu`, `[tool.ascend-port] torch-npu`) is pinned in requirements files even where
    the torch pin pairs with another release (`torch==2.5.1` with `--torch-npu 2.1.0` gets `torch-npu==2.1.0.*`),
    with a report at the torch pin: it has to become the target's torch (pip refuses the pair until then).

    Before:
        torch==2.5.1
    After:
        torch==2.5.1
        torch-npu==2.5.1.*  # added by ascend-port NPU602: torch-npu 2.5.1 pairs with torch 2.5.1
    """,
    example_file="requirements.txt",
)

_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*)(?:\.\*)?(?:(?:a|b|rc|\.post|\.dev|post|dev)\d*)*(?:\+[\w.]+)?$")


@dataclass(frozen=True)
class Verdict:
    rule: Rule
    reason: str  # for NPU600: why it goes; for NPU601: the note; for NPU602: the new requirement
    new_requirement: str = ""  # NPU601/NPU602: the replacement / added requirement (without marker)
    conflict: str = ""  # NPU602: the torch pin disagrees with the target the user set (reported at torch's line)


def torch_npu_specifier(torch_specifier: str) -> tuple[str | None, str]:
    """The torch-npu specifier for a torch specifier: (specifier or None when none can be added, explanation).

    ``==2.5.1`` and ``==2.5.1+cu121`` give ``==2.5.1.*`` (post releases are torch-npu's bug-fix releases),
    ``==2.5.*`` gives ``==2.5.*``, anything else (ranges, no pin) gives an unpinned torch-npu.
    """
    spec = torch_specifier.replace(" ", "")
    m = re.fullmatch(r"===?(.+)", spec)
    if not m or "," in spec:
        return "", "pip pairs it with torch through torch-npu's own torch requirement"
    version = m.group(1)
    if version.endswith(".*"):
        release = version[:-2]
        if not re.fullmatch(r"\d+(?:\.\d+)*", release):
            return "", "pip pairs it with torch through torch-npu's own torch requirement"
        parts = [int(p) for p in release.split(".")]
        if parts < [2, 1]:
            return None, f"torch {release}.* predates torch-npu on PyPI (2.1.0 and later)"
        if not _published(release + "."):
            return None, f"torch-npu has no release for torch {release}.* ({_nearest(release)})"
        return f"=={release}.*", f"torch-npu {release}.* pairs with torch {release}.*"
    v = _VERSION.match(version)
    if not v:
        return "", "pip pairs it with torch through torch-npu's own torch requirement"
    parts = [int(p) for p in v.group(1).split(".")]
    while len(parts) < 3:
        parts.append(0)
    release = ".".join(str(p) for p in parts[:3])
    if parts < [2, 1]:
        return None, f"torch {release} predates torch-npu on PyPI (2.1.0 and later): install torch_npu from Ascend"
    if not _published(release):
        return None, f"torch-npu has no release for torch {release} ({_nearest(release)}): pin a pair that exists"
    return f"=={release}.*", f"torch-npu {release} pairs with torch {release}"


def _bases() -> list[str]:
    """The torch versions torch-npu has final releases for (2.5.1 for 2.5.1 and 2.5.1.post1), oldest first."""
    bases: list[str] = []
    for release in npu_api.published_releases():
        base = re.match(r"\d+\.\d+\.\d+", release.version)
        if base and re.fullmatch(r"[\d.]+(?:post\d+)?", release.version) and base.group(0) not in bases:
            bases.append(base.group(0))
    return bases


def _published(release: str) -> bool:
    """Has torch-npu a final release for torch ``release`` (or, ending in ".", for a release under that prefix)?"""
    return any(b == release or (release.endswith(".") and b.startswith(release)) for b in _bases())


def _nearest(release: str) -> str:
    """The torch/torch-npu pairs that exist on either side of ``release``: what a pin could say instead."""
    key = [int(p) for p in release.rstrip(".").split(".")]
    bases = _bases()
    below = [b for b in bases if [int(p) for p in b.split(".")] < key]
    above = [b for b in bases if [int(p) for p in b.split(".")] > key]
    near = ", ".join(f"torch {b} with torch-npu {b}.*" for b in [*below[-1:], *above[:1]])
    if not above and below:  # (newer than the release table of this ascend-port: it may exist by now)
        return f"the newest this ascend-port knows: {near}"
    return f"nearest pairs: {near}"


def verdict(req: Requirement) -> Verdict | None:
    """NPU600/NPU601 for one requirement; NPU602 (adding torch-npu) is decided per list by ``torch_npu_verdict``."""
    key = req.key
    reason = removal_reason(key)
    if reason is not None:
        return Verdict(CUDA_ONLY_DEPENDENCY, reason)
    if key == "triton" and not req.is_url:
        was = req.text[req.name_start : req.spec_end].strip()
        return Verdict(
            TRITON_ASCEND_DEPENDENCY,
            f"was {was}; pin the triton-ascend release for your CANN (uninstall community triton first)",
            "triton-ascend",
        )
    return None


def explicit_target(options: PortOptions) -> str | None:
    """The covered torch-npu release the user asked for (--torch-npu, [tool.ascend-port] torch-npu), or None where
    the target was inferred from the torch pin or defaulted: NPU602 pins the user's choice as given."""
    return options.target if options.target_explicit else None


def torch_npu_verdict(requirements: list[Requirement], target: str | None = None) -> tuple[int, Verdict] | None:
    """Where torch-npu goes (index of the torch requirement) and what it is, or None: no torch, or already there.

    A Verdict with an empty ``new_requirement`` means torch-npu cannot be added (torch predates it): report only.
    ``target``: the release the user set; a torch pin of another torch gets the target's torch-npu all the same
    (what the user asked for; pip then says the pins conflict) and a ``conflict`` to report at the torch pin.
    """
    keys = [r.key for r in requirements]
    if "torch-npu" in keys or "torch" not in keys:
        return None
    index = keys.index("torch")
    torch = requirements[index]
    if torch.is_url:
        return None
    spec, why = torch_npu_specifier(torch.specifier)
    if target is not None and (pinned := _pinned_torch(torch.specifier)) is not None:
        wanted = _release_torch(target)
        if wanted and not (wanted + ".").startswith(pinned + "."):
            reason = f"the target you set, torch-npu {target}"
            conflict = (
                f"torch is pinned to {pinned}, but the target torch-npu {target} is built for torch {wanted} "
                f"only: pin torch=={wanted}" + (f" (or target torch-npu {pinned})" if spec else "")
            )
            return index, Verdict(TORCH_NPU_DEPENDENCY, reason, f"torch-npu=={wanted}.*", conflict)
    if spec is None:
        return index, Verdict(TORCH_NPU_DEPENDENCY, why)
    return index, Verdict(TORCH_NPU_DEPENDENCY, why, "torch-npu" + spec)


def _pinned_torch(specifier: str) -> str | None:
    """``2.5.1`` for ``==2.5.1``/``==2.5.1+cu121``, ``2.5`` for ``==2.5.*``; None for a range or no pin."""
    m = re.fullmatch(r"===?v?(\d+(?:\.\d+)*)(?:\.\*)?(?:\+[\w.]+)?", specifier.replace(" ", ""))
    return m.group(1) if m else None


def _release_torch(release: str) -> str | None:
    """The torch version a covered torch-npu release is built for (``2.1.0.post17`` -> ``2.1.0``)."""
    return next((r.torch_version for r in npu_api.published_releases() if r.version == release), None)


# --- the project steps (core/porting.ProjectStep) --------------------------------------------------------------------


class TransformersPin(ProjectStep):
    """The lowest transformers release the run's requirement files allow (PortOptions.transformers_pin, read by
    NPU803), and the lowest torch release (PortOptions.torch_floor, read by NPU122), or nothing when they name none;
    what the caller set wins. Not from the files above the folder given: a
    tree unpacked inside another project (a wheel in a cache) would take that project's pins, and unlike the torch
    pin's target, no flag overrides this one. (Only the run's own files of that name are resolved: resolving them
    all cost more than the rest of a run's start.)"""

    def facts(self, project: Project, options: PortOptions) -> PortOptions:
        if options.transformers_pin is not None:
            return options
        texts = []
        for path in project.pin_files:
            resolved = path.resolve()
            if not resolved.is_relative_to(project.folder) and all(
                p.resolve() != resolved for p in project.files if p.name == path.name
            ):
                continue
            try:
                texts.append(path.read_text("utf-8", errors="replace"))
            except OSError:
                continue
        pin = library_support.transformers_pin(texts)
        floor = options.torch_floor or library_support.lowest_pin(texts, "torch")
        return replace(options, transformers_pin=pin, torch_floor=floor) if pin or floor else options


class FlashReason(ProjectStep):
    """NPU600 says that npu_fusion_attention replaces flash-attn only where the run replaced a call: without one,
    the other wording, in the lines the port adds to the requirements, pins and scripts (never in the user's own)."""

    def after(self, files: list[FileResult], options: PortOptions) -> Sequence[str]:
        ported, unported = FLASH_REASON.encode(), FLASH_REASON_UNPORTED.encode()
        written = [
            f for f in files if f.changed and f.new_bytes and ported in f.new_bytes and not f.path.endswith(".py")
        ]
        if not written:
            return ()  # (the usual case: decided without loading the attention rules, and with them LibCST)
        from ascend_port.rules.attention.attention import FLASH_ATTN, FLASH_VARLEN, XFORMERS

        calls = {FLASH_ATTN.id, FLASH_VARLEN.id, XFORMERS.id}
        if any(f.applied and f.rule.id in calls for file in files for f in file.findings):
            return ()
        for file in written:
            assert file.new_bytes is not None
            try:
                if ported in Path(file.path).read_bytes():
                    continue  # (a line the user kept from an earlier port: its bytes are not the port's to change)
            except OSError:
                continue
            file.new_bytes = file.new_bytes.replace(ported, unported)
            lines = file.diff.splitlines(keepends=True)
            file.diff = b"".join(
                line.replace(ported, unported) if line.startswith(b"+") and not line.startswith(b"+++") else line
                for line in lines
            )
            file.findings = [
                replace(f, message=f.message.replace(FLASH_REASON, FLASH_REASON_UNPORTED)) for f in file.findings
            ]
        return ()


PROJECT_STEPS = (TransformersPin(), FlashReason())
