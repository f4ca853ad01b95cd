"""``pip install`` and ``git clone`` commands in shell code (scripts, Dockerfile ``RUN``, Makefile recipes, notebook
``!`` lines): the decisions of the requirements files (NPU600, NPU603) applied to the packages a command installs.

A CUDA-only package among others is cut out of the command (with a note above it); alone, the whole step is what
must go, and deleting a command could leave an empty ``then``/``do`` block, so it gets a TODO instead. NVIDIA apex
built with ``--cuda_ext`` and clones of the CUDA-only repositories get a TODO naming the Ascend replacement.
"""

from __future__ import annotations

import re
from typing import Protocol

from ascend_port.core.catalogue import Confidence, Rule, rule
from ascend_port.core.cuda_packages import conda_removal_reason, removal_reason
from ascend_port.formats.requirement import archive_requirement, parse_requirement
from ascend_port.formats.shell_lexer import Word
from ascend_port.formats.textedit import Edit, TextPort, comment_lines_above, newline_of
from ascend_port.rules.project.requirements import CUDA_ONLY_DEPENDENCY, NPU_EXTRA, TORCH_NPU_DEPENDENCY
from ascend_port.rules.project.requirements_txt import CPU_BUILD, CUDA_INDEX, CUDA_LOCAL, CUDA_TORCH_BUILD

CUDA_ONLY_INSTALL = rule(
    "NPU617",
    "cuda-only-install-step",
    Confidence.LOW,
    "A shell or Dockerfile step that only installs or builds CUDA-only code (`pip install flash-attn`, NVIDIA apex "
    "with `--cuda_ext`, a clone of their repositories): TODO.",
    """
    The step fails on an NPU host (these packages compile CUDA kernels) and nothing replaces it one for one:
    delete it, or install the Ascend counterpart the TODO names (torch_npu's fused attention for flash-attn and
    xformers; Ascend's apex or native `torch.autocast("npu")` and `torch.optim` (AdamW, SGD) for NVIDIA apex).
    Deleting a command could leave an empty `then`/`do` block, so the command is kept. A CUDA-only package among
    others in one `pip install` is cut out instead (NPU600), with a note above the command.

    Before:
        pip install flash-attn --no-build-isolation
        pip install transformers flash-attn accelerate
    After:
        # TODO(ascend-port): NPU617 [low] flash-attn: CUDA-only; torch_npu.npu_fusion_attention replaces it; ...
        pip install flash-attn --no-build-isolation
        # flash-attn removed by ascend-port NPU600: CUDA-only; torch_npu.npu_fusion_attention replaces it
        pip install transformers accelerate
    """,
    example_file="run.sh",
)

# pip options whose value is the next word (when not written ``--option=value``).
_VALUE_OPTIONS = {
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-e",
    "--editable",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--src",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--upgrade-strategy",
    "--progress-bar",
    "--cache-dir",
    "--log",
    "--timeout",
    "--retries",
    "--proxy",
    "--trusted-host",
    "--no-binary",
    "--only-binary",
    "--global-option",
    "--config-settings",
    "-C",
    "--build-option",
    "--install-option",
}
_INDEX_OPTIONS = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links"}
_TORCH_FAMILY = {"torch", "torchvision", "torchaudio"}
# Source repositories of CUDA-only packages, installed from git (`pip install git+https://...`, `git clone`).
_CUDA_REPOS = {
    "dao-ailab/flash-attention": "flash-attn",
    "facebookresearch/xformers": "xformers",
}
_NVIDIA_APEX = re.compile(r"(?i)github\.com[/:]nvidia/apex(?:\.git)?(?:[@#/]|$)")
_APEX_MESSAGE = (
    "NVIDIA apex with its CUDA extensions (--cuda_ext) does not build for Ascend: use Ascend's apex "
    "(gitcode.com/Ascend/apex, built for torch_npu), or torch.autocast('npu') and torch.optim "
    "instead"
)


class ShellCommand(Protocol):
    """What ``shell._ShellCode`` gives this module: the port, the code, where the code sits and where TODOs go."""

    port: TextPort
    code: str

    def raw(self, word: Word) -> str: ...

    def todo(self, rule: Rule, offset: int, message: str) -> None: ...

    @property
    def ctx(self) -> ShellContextLike: ...

    @property
    def safe(self) -> list[int]: ...


class ShellContextLike(Protocol):
    base: int
    todo_above: int | None
    todo_indent: str | None
    todo_prefix: str


def _note_line(sc: ShellCommand, offset: int) -> tuple[int, str, str]:
    """(line start, indent, comment prefix) of a note about the code at ``offset``: where its TODO would go."""
    ctx = sc.ctx
    line_start = ctx.todo_above if ctx.todo_above is not None else max(s for s in sc.safe if s <= offset)
    line_start = sc.port.lines.line_start(line_start)
    indent = sc.port.lines.indent_at(line_start) if ctx.todo_indent is None else ctx.todo_indent
    return line_start, indent, ctx.todo_prefix


def _value(sc: ShellCommand, word: Word) -> str:
    return word.literal if word.literal is not None else sc.raw(word)


def _repo_package(value: str) -> str | None:
    """The CUDA-only package a git URL builds (``git+https://github.com/Dao-AILab/flash-attention``), or None."""
    lowered = value.lower()
    for repo, package in _CUDA_REPOS.items():
        if re.search(rf"github\.com[/:]{re.escape(repo)}(?:\.git)?(?:[@#/]|$)", lowered):
            return package
    return None


def port_command(sc: ShellCommand, args: list[Word], i: int) -> None:
    """``args[i]`` is the command word: a ``pip install``, a ``conda install`` or a ``git clone`` of a CUDA-only
    repository."""
    if i >= len(args):
        return
    name = (args[i].literal or "").rsplit("/", 1)[-1]
    rest = [_value(sc, w) for w in args[i + 1 :]]
    start = None
    if re.fullmatch(r"pip(?:3(?:\.\d+)?)?", name) and rest[:1] == ["install"]:
        start = i + 2
    elif re.fullmatch(r"python(?:3(?:\.\d+)?)?", name) and rest[:3] == ["-m", "pip", "install"]:
        start = i + 4
    elif name == "uv" and rest[:2] == ["pip", "install"]:
        start = i + 3
    elif name in ("conda", "mamba", "micromamba") and rest[:1] == ["install"]:
        _CondaInstall(sc, args, i + 2).run()
    elif name == "git" and "clone" in rest:
        _git_clone(sc, args[i], rest)
        return
    elif name == "uv" and rest[:1] == ["sync"] and sc.port.options.cuda_extras:
        _uv_sync_extras(sc, args[i + 2 :])
    if start is not None:
        _PipInstall(sc, args, start).run()


def _git_clone(sc: ShellCommand, word: Word, rest: list[str]) -> None:
    offset = sc.ctx.base + word.start
    for value in rest:
        if _NVIDIA_APEX.search(value):
            sc.todo(CUDA_ONLY_INSTALL, offset, _APEX_MESSAGE)
        elif package := _repo_package(value):
            reason = removal_reason(package)
            sc.todo(CUDA_ONLY_INSTALL, offset, f"clones {package} ({reason}): drop this build step")


class _PipInstall:
    """One ``pip install``: its index options, the requirements it names, and whether it builds apex's CUDA code."""

    def __init__(self, sc: ShellCommand, args: list[Word], start: int) -> None:
        self.sc, self.args, self.start = sc, args, start
        self.requirements: list[Word] = []  # the words that name what to install (packages, URLs, paths)
        self.cuda_only: list[tuple[Word, str, str]] = []  # (word, requirement as written, why it goes)
        self.cuda_ext = False

    def run(self) -> None:
        sc, args = self.sc, self.args
        k = self.start
        while k < len(args):
            value = _value(sc, args[k])
            option, _, inline = value.partition("=")
            if value.startswith("-"):
                argument = inline if inline or "=" in value else None
                if argument is None and option in _VALUE_OPTIONS | _INDEX_OPTIONS and k + 1 < len(args):
                    k += 1
                    argument = _value(sc, args[k])
                    if option in ("-e", "--editable", "-r", "--requirement"):
                        self.requirements.append(args[k])  # installs something: the command stays
                    if option in ("-e", "--editable"):
                        _npu_extra(sc, args[k], argument)
                self.option(option, argument or "", args[k])
            else:
                self.requirement(args[k], value)
            k += 1
        if self.cuda_ext:
            sc.todo(CUDA_ONLY_INSTALL, sc.ctx.base + args[self.start - 1].start, _APEX_MESSAGE)
        self.remove_cuda_only()

    def option(self, option: str, argument: str, word: Word) -> None:
        if "--cuda_ext" in argument or option == "--cuda_ext":
            self.cuda_ext = True
        elif option in _INDEX_OPTIONS and CUDA_INDEX.search(argument):
            self.sc.todo(CUDA_TORCH_BUILD, self.sc.ctx.base + word.start, f"CUDA wheel index: {CPU_BUILD}")

    def requirement(self, word: Word, value: str) -> None:
        self.requirements.append(word)
        if word.literal is None:
            return  # `$PKG`, `"flash-attn==${V}"`: not known statically
        if _npu_extra(self.sc, word, value):
            return
        if _NVIDIA_APEX.search(value):
            self.cuda_ext = self.cuda_ext or "cuda_ext" in value
            return
        package = _repo_package(value)
        wheel = re.search(r"\.(?:whl|tar\.gz|zip)$", value) is not None  # a local file or URL: named by its file
        req = None if package else archive_requirement(value) if wheel else parse_requirement(value)
        key = package or (req.key if req else None)
        if key is None:
            return
        if req is not None and key in _TORCH_FAMILY and CUDA_LOCAL.search(req.specifier):
            self.sc.todo(CUDA_TORCH_BUILD, self.sc.ctx.base + word.start, f"{value} is a CUDA build: {CPU_BUILD}")
        reason = removal_reason(key)
        if reason is not None:
            self.cuda_only.append((word, value if req else key, reason))

    def remove_cuda_only(self) -> None:
        """Cut the CUDA-only packages out when others remain; else the step itself must go: a TODO."""
        sc = self.sc
        keep = [w for w in self.requirements if all(w is not c[0] for c in self.cuda_only)]
        for word, package, reason in self.cuda_only:
            offset = sc.ctx.base + word.start
            if not keep:
                sc.todo(CUDA_ONLY_INSTALL, offset, f"{package}: {reason}; drop it from this install step")
                continue
            previous = self.args[self.args.index(word) - 1]
            cut = Edit(sc.ctx.base + previous.end, sc.ctx.base + word.end, "")
            line_start, indent, prefix = _note_line(sc, offset)
            note = f"{prefix} {package} removed by ascend-port {CUDA_ONLY_DEPENDENCY.id}: {reason}"
            edits = [cut]
            if note not in comment_lines_above(sc.port.lines, line_start, prefix):
                edits.append(Edit(line_start, line_start, indent + note + newline_of(sc.port.text)))
            sc.port.fix(CUDA_ONLY_DEPENDENCY, offset, edits, f"{package} removed from the install command: {reason}")


# The project itself with extras: `.[gpu]`, `.[gpu,dev]`, `..[gpu]` from a folder of scripts, `/app[gpu]` where a
# Dockerfile copied it (not a package, nor a path below the project: `./third_party/lib[gpu]` is another one's).
_LOCAL_EXTRAS = re.compile(r"(?P<path>\.{1,2}/?|/[^\[\]]+)\[(?P<extras>[^\[\]]*)\]")


def _npu_extra(sc: ShellCommand, word: Word, value: str) -> bool:
    """``pip install .[gpu]`` in a project that gets an ``npu`` extra (PortOptions.cuda_extras): the npu extra
    instead of the CUDA hosts' one, whose torch comes from a CUDA wheel index (torch-npu refuses it) and which
    lacks torch-npu. True when ``value`` names the project with extras."""
    m = _LOCAL_EXTRAS.fullmatch(value)
    if m is None:
        return False
    cuda = set(sc.port.options.cuda_extras)
    extras = [e.strip() for e in m["extras"].split(",") if e.strip()]
    if not cuda & set(extras):
        return True
    new = list(dict.fromkeys(NPU_EXTRA if e in cuda else e for e in extras))
    raw = sc.raw(word)
    opening, closing = raw.find("["), raw.rfind("]")
    if opening < 0 or closing < opening:
        return True
    offset = sc.ctx.base + word.start
    edit = Edit(offset + opening + 1, offset + closing, ",".join(new))
    old_extras = ",".join(extras)
    sc.port.fix(
        TORCH_NPU_DEPENDENCY,
        offset,
        [edit],
        f"{m['path']}[{old_extras}] -> [{','.join(new)}]: the npu extra brings torch-npu, the CUDA hosts' one a CUDA "
        "torch",
    )
    return True


def _uv_sync_extras(sc: ShellCommand, args: list[Word]) -> None:
    """``uv sync --extra gpu``: ``--extra npu`` in a project that gets that extra (see _npu_extra)."""
    cuda = set(sc.port.options.cuda_extras)
    for k, word in enumerate(args):
        value = _value(sc, word)
        if value == "--extra" and k + 1 < len(args):
            target, name = args[k + 1], _value(sc, args[k + 1])
            start = sc.ctx.base + target.start
        elif value.startswith("--extra="):
            target, name = word, value.partition("=")[2]
            start = sc.ctx.base + word.start + len("--extra=")
        else:
            continue
        if name in cuda and target.literal is not None and sc.raw(target).endswith(name):
            end = sc.ctx.base + target.end
            sc.port.fix(
                TORCH_NPU_DEPENDENCY,
                start,
                [Edit(end - len(name), end, NPU_EXTRA)],
                f"--extra {name} -> --extra {NPU_EXTRA}: the npu extra brings torch-npu, the CUDA hosts' one a CUDA "
                "torch",
            )


_CONDA_VALUE_OPTIONS = {"-c", "--channel", "-n", "--name", "-p", "--prefix", "--file", "--solver", "--repodata-fn"}
_CONDA_SPEC = re.compile(r"^(?:[\w.-]+::)?(?P<name>[A-Za-z0-9_][A-Za-z0-9_.-]*)(?P<rest>.*)$")


class _CondaInstall(_PipInstall):
    """``conda install``: the CUDA runtime packages (cudatoolkit, pytorch-cuda, cuda-*, nccl) go as CUDA-only
    packages do in pip; a CUDA build of pytorch gets NPU603's TODO (torch_npu is installed with pip)."""

    def __init__(self, sc: ShellCommand, args: list[Word], start: int) -> None:
        super().__init__(sc, args, start)
        self.channels: list[str] = []
        self.pytorch: tuple[Word, str] | None = None
        self.names: set[str] = set()

    def run(self) -> None:
        sc, args = self.sc, self.args
        k = self.start
        while k < len(args):
            value = _value(sc, args[k])
            option, _, inline = value.partition("=")
            if value.startswith("-"):
                argument = inline
                if not inline and option in _CONDA_VALUE_OPTIONS and k + 1 < len(args):
                    k += 1
                    argument = _value(sc, args[k])
                if option in ("-c", "--channel"):
                    self.channels.append(argument)
            else:
                self.requirement(args[k], value)
            k += 1
        if self.pytorch is not None:
            word, spec = self.pytorch
            cuda = "nvidia" in self.channels or self.names & {"pytorch-cuda", "cudatoolkit", "cuda-toolkit"}
            if (
                spec.startswith("pytorch-gpu")
                or re.search(r"cuda|cu\d{2,3}", spec)
                or (cuda and "cpuonly" not in self.names)
            ):
                sc.todo(
                    CUDA_TORCH_BUILD,
                    sc.ctx.base + word.start,
                    f"conda installs a CUDA build of pytorch ({spec}), and torch-npu has no conda package: install "
                    "torch (the CPU build) and torch-npu of the same release with pip",
                )
        self.remove_cuda_only()

    def requirement(self, word: Word, value: str) -> None:
        self.requirements.append(word)
        m = _CONDA_SPEC.match(value) if word.literal is not None else None
        if m is None:
            return
        name = m.group("name").lower()
        self.names.add(name)
        if name in ("pytorch", "pytorch-gpu"):
            self.pytorch = (word, value)
        elif (reason := conda_removal_reason(name)) is not None:
            self.cuda_only.append((word, value, reason))
