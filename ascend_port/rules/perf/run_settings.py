"""NPU902: the run settings torch_npu's tuning guides give, added to a launch script the port edits (shell ``*.sh``
only), each under a comment line that says what it does. The values and their sources: data/perf_figures.json."""

from __future__ import annotations

import re
from dataclasses import replace

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.options import PortOptions
from ascend_port.core.porting import Project, ProjectStep
from ascend_port.formats.shell_lexer import Word, lex
from ascend_port.formats.textedit import Edit, TextPort, newline_of

RUN_SETTINGS = rule(
    "NPU902",
    "launch-run-settings",
    Confidence.MEDIUM,
    "A launch script the port edits (`torchrun`, `deepspeed`, `accelerate launch`) gets torch_npu's run settings "
    "it does not set: `TASK_QUEUE_ENABLE=2`, `CPU_AFFINITY_CONF=1`, `PYTORCH_NPU_ALLOC_CONF`, and HCCL timeouts "
    "for multi-host jobs.",
    """
    Added above the script's first command (after its shebang, comments and `#SBATCH` lines), each `export` under
    a comment line saying what it does, only in a script the port changes for another reason (a script the port
    leaves alone is not edited for these alone) and that starts a distributed launcher (`torchrun`,
    `python -m torch.distributed.run`/`launch`, `deepspeed`, `accelerate launch`). A setting the script names
    anywhere (set, read or unset) is not added, and `PYTORCH_NPU_ALLOC_CONF` is not where the script sets a
    `PYTORCH_*_ALLOC_CONF` of its own. `TASK_QUEUE_ENABLE=2`: the level-2 operator-dispatch pipeline (torch_npu
    accepts 0, 1 and 2 and defaults to 1; NPU graph capture refuses 2, so a project whose Python captures CUDA or
    NPU graphs does not get it). `CPU_AFFINITY_CONF=1`: each NPU's host
    threads on its own share of CPU cores. `PYTORCH_NPU_ALLOC_CONF=expandable_segments:True`: less fragmentation in
    the caching allocator. `HCCL_CONNECT_TIMEOUT=1200` and `HCCL_EXEC_TIMEOUT=1800` only where the launcher runs on
    several hosts (`--nnodes`, `--num_nodes`, `--num_machines` above 1 or set by a variable, a `--hostfile`):
    hosts that start apart wait 20 minutes for each other instead of 2. Medium: a value to weigh (level 2 may raise
    the peak NPU memory a little).

    Before:
        #!/bin/bash
        export CUDA_VISIBLE_DEVICES=0,1
        torchrun --nproc_per_node 2 train.py
    After:
        #!/bin/bash
        # TASK_QUEUE_ENABLE=2: torch_npu's level-2 operator dispatch pipeline (default 1; NPU graph capture needs 1 or 0)
        export TASK_QUEUE_ENABLE=2
        # CPU_AFFINITY_CONF=1: binds each NPU's host threads to its own share of the CPU cores
        export CPU_AFFINITY_CONF=1
        # PYTORCH_NPU_ALLOC_CONF: expandable segments cut fragmentation in the NPU caching allocator
        export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
        export ASCEND_RT_VISIBLE_DEVICES=0,1
        torchrun --nproc_per_node 2 train.py
    Stays (the port changes nothing else in it):
        #!/bin/bash
        torchrun --nproc_per_node 2 train.py
    """,
    follows=("NPU6", "NPU8"),  # the edits that make a script one the port changes
    example_file="run.sh",
)

# (name, value, its comment): what every launch script gets, then what a multi-host one gets too.
SETTINGS = (
    (
        "TASK_QUEUE_ENABLE",
        "2",
        "torch_npu's level-2 operator dispatch pipeline (default 1; NPU graph capture needs 1 or 0)",
    ),
    ("CPU_AFFINITY_CONF", "1", "binds each NPU's host threads to its own share of the CPU cores"),
    (
        "PYTORCH_NPU_ALLOC_CONF",
        "expandable_segments:True",
        "expandable segments cut fragmentation in the NPU caching allocator",
    ),
)
MULTI_HOST_SETTINGS = (
    ("HCCL_CONNECT_TIMEOUT", "1200", "seconds HCCL waits for the other hosts to connect (default 120)"),
    ("HCCL_EXEC_TIMEOUT", "1800", "seconds a rank waits for the others at a collective (a slow checkpoint save)"),
)
_ALLOC_CONF = re.compile(r"\bPYTORCH_\w*ALLOC_CONF\b")
_LAUNCHERS = frozenset({"torchrun", "deepspeed"})
_NODE_FLAGS = ("--nnodes", "--num_nodes", "--num-nodes", "--num_machines", "--num-machines")
_PREFIXES = frozenset({"sudo", "env", "nohup", "time", "exec", "command", "srun", "then", "do", "else", "!", "{"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_PYTHON = re.compile(r"python[\d.]*")


def add_run_settings(port: TextPort, code: str) -> None:
    """Add the settings of ``SETTINGS`` (and ``MULTI_HOST_SETTINGS``) that the script does not name, above its
    first command, when the port edits it for another reason and it starts a distributed launcher."""
    if not port.edits or not port.enabled(RUN_SETTINGS):
        return
    launches = [args for args in _commands(code) if _launcher(args)]
    if not launches:
        return
    wanted = [setting for setting in SETTINGS if not (setting[0] == "TASK_QUEUE_ENABLE" and port.options.graph_capture)]
    if any(_multi_host(args) for args in launches):
        wanted += MULTI_HOST_SETTINGS
    missing = [
        (name, value, why)
        for name, value, why in wanted
        if not re.search(rf"\b{name}\b", code) and not (name == "PYTORCH_NPU_ALLOC_CONF" and _ALLOC_CONF.search(code))
    ]
    at = _first_command_line(code)
    if not missing or at is None:
        return
    newline = newline_of(code)
    block = "".join(
        f"# {_label(name, value)}: {why}{newline}export {name}={value}{newline}" for name, value, why in missing
    )
    names = ", ".join(f"{name}={value}" for name, value, _ in missing)
    edit = Edit(at, at, block)
    if port.fix(RUN_SETTINGS, at, [edit], f"run settings added: {names}"):
        # First of the insertions at that line: a TODO comment another rule wrote above the command stays on it.
        port.edits.remove(edit)
        port.edits.insert(0, edit)


# Graph capture in the project's Python (CUDA's names, and those NPU701/NPU702 port them to).
_GRAPHS = re.compile(rb"CUDAGraph|NPUGraph|make_graphed_callables|\b(?:cuda|npu)\.graph\(|[\"'](?:cuda|npu)graphs[\"']")


class GraphCapture(ProjectStep):
    """Does the project's Python capture graphs (PortOptions.graph_capture)? Read only where it has a shell script
    for NPU902 to edit."""

    def facts(self, project: Project, options: PortOptions) -> PortOptions:
        files = project.files
        if options.graph_capture or not any(path.suffix == ".sh" for path in files):
            return options
        for path in files:
            if path.suffix == ".py":
                try:
                    if _GRAPHS.search(path.read_bytes()):
                        return replace(options, graph_capture=True)
                except OSError:
                    continue
        return options


PROJECT_STEPS = (GraphCapture(),)


def _label(name: str, value: str) -> str:
    """How a comment names the setting: with its value where that is short."""
    return f"{name}={value}" if len(value) <= 8 else name


def _commands(code: str) -> list[list[str]]:
    """Each simple command's words (their literal text; "" for a word with an expansion), redirections left out."""
    lexed = lex(code)
    return [[_text(code, w) for w in words if not w.redirect] for words in lexed.commands]


def _text(code: str, word: Word) -> str:
    return word.literal if word.literal is not None else code[word.start : word.end]


def _program(args: list[str]) -> list[str]:
    """The command from its program on (assignments, `sudo`, `env`, `nohup` and the like before it dropped)."""
    i = 0
    while i < len(args) and (args[i] in _PREFIXES or _ASSIGNMENT.match(args[i]) or args[i].startswith("-") and i):
        i += 1
    return args[i:]


def _launcher(args: list[str]) -> bool:
    program = _program(args)
    if not program:
        return False
    name = program[0].rsplit("/", 1)[-1]
    if name in _LAUNCHERS:
        return True
    if name == "accelerate":
        return program[1:2] == ["launch"]
    if _PYTHON.fullmatch(name):
        modules = [program[k + 1] for k, word in enumerate(program[:-1]) if word == "-m"]
        return bool(modules) and modules[0] in ("torch.distributed.run", "torch.distributed.launch")
    return False


def _multi_host(args: list[str]) -> bool:
    """Does the launcher run on several hosts: a node count above 1 or one the shell computes, or a hostfile?"""
    for k, word in enumerate(args):
        flag, _, value = word.partition("=")
        if flag in ("--hostfile", "-H"):
            return True
        if flag not in _NODE_FLAGS:
            continue
        if not value and k + 1 < len(args):
            value = args[k + 1]
        if "$" in value:
            return True  # (the script is written for any number of hosts)
        counts = [int(part) for part in value.split(":") if part.isdigit()]  # `--nnodes=1:4` (elastic)
        if counts and max(counts) > 1:
            return True
    return False


def _first_command_line(code: str) -> int | None:
    """The offset of the script's first line that is not blank or a comment (its shebang, `#SBATCH` lines)."""
    offset = 0
    for line in code.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return offset
        offset += len(line)
    return None
