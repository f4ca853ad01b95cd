"""Shell code: ``*.sh`` scripts, and the shell parts of Makefiles, Dockerfiles and notebook ``!`` lines (NPU610-616).

The tokenizer (``shell_lexer``) says which word is a command, which words are its arguments and where variables are
set or read; this module decides what changes. Comments, single-quoted strings, plain text in double quotes and
heredoc bodies are never edited (heredocs feed text to a program: even an unquoted one may be a config file or a
Python script).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ascend_port.core.catalogue import Confidence, Rule, rule
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.formats.shell_lexer import Word, lex
from ascend_port.formats.textedit import Edit, TextPort
from ascend_port.rules.device.settings import CUDA_ENV_VARS
from ascend_port.rules.distributed.env_vars import (
    ENV_NEAREST,
    ENV_REVIEW,
    ENV_SAME,
    ENV_VALUES,
    NCCL_ENV_NAME,
    review_env_value,
)
from ascend_port.rules.perf import run_settings
from ascend_port.rules.project import installs, library_flags, switches

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

# --- launch scripts: shell, Makefile recipes, Dockerfile RUN/ENV, notebook ! lines -------------------------------

SHELL_CUDA_ENV_VAR = rule(
    "NPU610",
    "shell-cuda-env-var",
    HIGH,
    "CUDA/NCCL runtime variables with an exact Ascend counterpart, set or read in shell code -> the Ascend name "
    "(`CUDA_VISIBLE_DEVICES` -> `ASCEND_RT_VISIBLE_DEVICES`, `TORCH_NCCL_*` -> `TORCH_HCCL_*`).",
    """
    In assignments (`NAME=value cmd`), `export`/`unset`/`declare`/`local`/`readonly`, `env NAME=value`, `$NAME` and
    `${NAME...}` expansions, Dockerfile `ENV`, Makefile variables and notebook `%env`. Comments, single-quoted
    strings, plain text in double quotes and heredoc bodies are never touched. The names are those of the Python
    rules NPU111 and NPU207 (one table), so a launch script and the code it starts agree: `CUDA_VISIBLE_DEVICES`,
    `CUDA_LAUNCH_BLOCKING`, `PYTORCH_CUDA_ALLOC_CONF`, `PYTORCH_NO_CUDA_MEMORY_CACHING`, the `TORCH_NCCL_*` watchdog
    settings torch_npu reads as `TORCH_HCCL_*`, and the legacy `NCCL_BLOCKING_WAIT`/`NCCL_ASYNC_ERROR_HANDLING`.

    Before:
        export CUDA_VISIBLE_DEVICES=0,1,2,3
    After:
        export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3
    Stays (AMD's variable: ROCm code keeps its devices):
        export HIP_VISIBLE_DEVICES=0
        python train.py
    """,
    example_file="run.sh",
)
SHELL_NCCL_ENV_VAR = rule(
    "NPU611",
    "shell-nccl-env-var",
    MEDIUM,
    "NCCL variables whose HCCL counterpart reads the value differently -> the HCCL name, the value converted "
    "(or a TODO where HCCL would reject it).",
    """
    The table of NPU208: `NCCL_SOCKET_IFNAME` -> `HCCL_SOCKET_IFNAME`, `NCCL_SOCKET_FAMILY` -> `HCCL_SOCKET_FAMILY`
    are renamed; `NCCL_BUFFSIZE` (bytes) -> `HCCL_BUFFSIZE` (MB), `NCCL_ALGO=Ring` -> `HCCL_ALGO`
    `"level0:NA;level1:ring"` and `NCCL_IB_TIMEOUT`/`_RETRY_CNT`/`_TC`/`_SL` -> `HCCL_RDMA_*` (within HCCL's
    ranges) are renamed where a shell assignment sets them to a literal HCCL accepts, with the value converted.
    Elsewhere (a value HCCL rejects, `$X`, a Dockerfile `ENV`) the NCCL name stays with NPU612's TODO, and reads
    (`$NCCL_BUFFSIZE`) follow the setting's name. Same places as NPU610.

    Before:
        export NCCL_SOCKET_IFNAME=eth0
        export NCCL_BUFFSIZE=8388608
    After:
        export HCCL_SOCKET_IFNAME=eth0
        export HCCL_BUFFSIZE=8
    """,
    example_file="run.sh",
)
SHELL_NCCL_NO_EQUIVALENT = rule(
    "NPU612",
    "shell-nccl-env-var-no-equivalent",
    LOW,
    "NCCL variables set in shell code with no HCCL equivalent (`NCCL_DEBUG`, `NCCL_IB_*`, `NCCL_P2P_*` ...): TODO.",
    """
    HCCL ignores NCCL settings. The TODO names the nearest Ascend setting where there is one (as NPU209 does in
    Python): `NCCL_DEBUG` -> CANN logging (`ASCEND_GLOBAL_LOG_LEVEL`, `ASCEND_SLOG_PRINT_TO_STDOUT`),
    `NCCL_P2P_DISABLE` -> `HCCL_INTRA_PCIE_ENABLE`/`HCCL_INTRA_ROCE_ENABLE`. The setting is kept.

    Before:
        export NCCL_DEBUG=INFO
    After:
        # TODO(ascend-port): NPU612 [low] NCCL_DEBUG has no HCCL equivalent and no effect on NPU; ...
        export NCCL_DEBUG=INFO
    """,
    example_file="run.sh",
)
NVIDIA_SMI = rule(
    "NPU613",
    "nvidia-smi",
    HIGH,
    "`nvidia-smi` run without arguments -> `npu-smi info`.",
    """
    Both print the device table. Only the bare command in command position is rewritten; with arguments the
    options differ (NPU614).

    Before:
        nvidia-smi
    After:
        npu-smi info
    """,
    example_file="run.sh",
)
NVIDIA_SMI_QUERY = rule(
    "NPU614",
    "nvidia-smi-query",
    LOW,
    "`nvidia-smi` with arguments (GPU counting with `-L`, `--query-gpu`) or as an argument: TODO.",
    """
    npu-smi has other options and output formats, so queries are not translated. Counting GPUs
    (`$(nvidia-smi -L | wc -l)`) is the usual case: on Ascend count NPUs with
    `python -c "import torch, torch_npu; print(torch.npu.device_count())"`, or read `npu-smi info -l`.

    Before:
        NPROC=$(nvidia-smi -L | wc -l)
    After:
        # TODO(ascend-port): NPU614 [low] nvidia-smi -L lists GPUs, here to count them; count NPUs with ...
        NPROC=$(nvidia-smi -L | wc -l)
    """,
    example_file="run.sh",
)
DEVICE_FLAG = rule(
    "NPU615",
    "device-flag",
    HIGH,
    "`--device cuda`, `--device=cuda:0` (and `--device-type`) command-line arguments -> `npu`.",
    """
    The value of a `--device`, `--device-type` or `--device_type` argument that is a CUDA device string, quoted
    or not, in shell code, Makefile recipes, Dockerfile `RUN` and notebook `!` lines. The Python side (NPU104) ports
    the argparse defaults and choices, so both ends agree.

    Before:
        python train.py --device cuda:0
    After:
        python train.py --device npu:0
    """,
    example_file="run.sh",
)
BACKEND_FLAG = rule(
    "NPU616",
    "backend-flag",
    HIGH,
    "`--backend nccl`, `--dist-backend=nccl`, `--ddp_backend nccl` command-line arguments -> `hccl`.",
    """
    HCCL is the collective backend of torch_npu. The value `nccl` (and `cuda:nccl` in a device:backend list) of
    `--backend`, `--dist-backend`, `--dist_backend`, `--ddp-backend`, `--ddp_backend`, `--distributed-backend`.
    `torchrun` itself needs no change.

    Before:
        python train.py --backend nccl
    After:
        python train.py --backend hccl
    """,
    example_file="run.sh",
)

_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=")

# --- what changes --------------------------------------------------------------------------------------------------

# The same name tables as the Python rules (NPU111, NPU207-NPU209), so a script and the code it launches agree.
ENV_HIGH: dict[str, str] = {**CUDA_ENV_VARS, **ENV_SAME}


def env_rename(name: str) -> tuple[Rule, str] | None:
    """(rule, Ascend name) for a CUDA/NCCL variable with an Ascend counterpart."""
    if name in ENV_HIGH:
        return SHELL_CUDA_ENV_VAR, ENV_HIGH[name]
    if name in ENV_REVIEW:
        return SHELL_NCCL_ENV_VAR, ENV_REVIEW[name]
    return None


def env_gap(name: str) -> str | None:
    """The TODO message for an NCCL variable with no counterpart, else None."""
    if not NCCL_ENV_NAME.match(name) or name in ENV_HIGH or name in ENV_REVIEW:
        return None
    hint = ENV_NEAREST.get(name, "no Ascend setting is known to do the same")
    return f"{name} has no HCCL equivalent and no effect on NPU; {hint}"


_PLAIN_VALUE = re.compile(r"[\w.:,;+-]*")


def _literal_value(raw: str) -> tuple[str, str] | None:
    """(the value, its quote) of a shell assignment's value that is a plain literal (``8388608``, ``"Ring"``);
    None where the shell computes it (``$X``, ``$(...)``)."""
    quote = raw[:1] if raw[:1] in "\"'" and len(raw) >= 2 and raw[-1:] == raw[:1] else ""
    inner = raw[1:-1] if quote else raw
    return (inner, quote) if _PLAIN_VALUE.fullmatch(inner) else None


def rename_site(
    port: TextPort,
    offset: int,
    name: str,
    todo: Callable[[Rule, int, str], None] | None,
    value: tuple[int, str] | None = None,
) -> None:
    """Rename the variable at ``offset`` or, where it is set (``todo`` given), leave the TODO it needs. ``value``:
    where the value it is set to starts, and its text, for the NPU208 variables whose value HCCL reads differently
    (converted, or the NCCL name kept with a TODO; a site that gives none is kept where it sets the variable)."""
    renamed = env_rename(name)
    if renamed and name in ENV_VALUES:
        if todo is None:
            return  # a read: it follows the name the setting keeps or converts
        literal = _literal_value(value[1]) if value else None
        why = "" if value is not None else "its value is not checked here"
        new_value, message = review_env_value(name, literal[0] if literal else None, why)
        if message is not None or new_value is None or value is None or literal is None:
            todo(SHELL_NCCL_NO_EQUIVALENT, offset, message or f"{name}: set {renamed[1]} by hand")
            return
        quote = literal[1] or ('"' if ";" in new_value else "")
        edits = [Edit(offset, offset + len(name), renamed[1])]
        if new_value != literal[0]:
            edits.append(Edit(value[0], value[0] + len(value[1]), f"{quote}{new_value}{quote}"))
        port.fix(renamed[0], offset, edits, f"{name}={literal[0]} -> {renamed[1]}={new_value}")
    elif renamed:
        port.fix(renamed[0], offset, [Edit(offset, offset + len(name), renamed[1])], f"{name} -> {renamed[1]}")
    elif todo and (gap := env_gap(name)):
        todo(SHELL_NCCL_NO_EQUIVALENT, offset, gap)


DEVICE_FLAGS = {"--device", "--device-type", "--device_type"}
BACKEND_FLAGS = {
    "--backend",
    "--dist-backend",
    "--dist_backend",
    "--ddp-backend",
    "--ddp_backend",
    "--distributed-backend",
    "--distributed_backend",
}
_DEVICE_VALUE = re.compile(r"(?P<q>[\"']?)cuda(?P<rest>:[^\"'\s]*)?(?P=q)")
_BACKEND_VALUE = re.compile(r"(?P<q>[\"']?)(?P<inner>[\w:,]+)(?P=q)")
_PREFIX_WORDS = {
    "if",
    "then",
    "else",
    "elif",
    "do",
    "while",
    "until",
    "!",
    "{",
    "time",
    "exec",
    "nohup",
    "command",
    "builtin",
}
_DECLARE = {"export", "declare", "typeset", "local", "readonly", "unset"}
COUNT_MESSAGE = (
    "nvidia-smi -L lists GPUs, here to count them; count NPUs with "
    '`python -c "import torch, torch_npu; print(torch.npu.device_count())"` or read `npu-smi info -l`'
)


@dataclass
class ShellContext:
    """Where the shell code sits in the file the TextPort edits, and where its TODO comments go."""

    base: int = 0  # offset of the code in the port's text
    todo_above: int | None = None  # line start for TODOs (default: the safe line above the finding)
    todo_indent: str | None = None
    todo_prefix: str = "#"
    make: bool = False


def port_shell_code(port: TextPort, code: str, ctx: ShellContext | None = None) -> None:
    """Record the edits, findings and TODOs for the shell code ``code`` (found at ``ctx.base`` in ``port.text``)."""
    _ShellCode(port, code, ctx or ShellContext()).run()


def port_argv(port: TextPort, code: str, argv: list[Word], ctx: ShellContext, quote: str | None = None) -> None:
    """One command given as its argument list (a Dockerfile exec-form ``CMD ["python", ...]``): ``argv`` spans the
    unquoted text of each argument in ``code``, as the tokenizer's words would. A bare ``nvidia-smi`` becomes two
    arguments, ``npu-smi`` and ``info``: written with ``quote`` (a JSON array's ``"``), else left with a TODO."""
    code_ = _ShellCode(port, code, ctx)
    if len(argv) == 1 and (argv[0].literal or "").rsplit("/", 1)[-1] == "nvidia-smi":
        offset = ctx.base + argv[0].start
        if quote:
            edit = Edit(offset, ctx.base + argv[0].end, f"npu-smi{quote}, {quote}info")
            port.fix(NVIDIA_SMI, offset, [edit], "nvidia-smi -> npu-smi info")
        else:
            code_.todo(NVIDIA_SMI_QUERY, offset, "nvidia-smi: run npu-smi with the argument info (`npu-smi info`)")
        return
    code_.command(argv)


class _ShellCode:
    """One ``port_shell_code`` call: the code's tokens, and the variable sites already handled (a site can be both
    an assignment and an expansion; it is renamed once)."""

    def __init__(self, port: TextPort, code: str, ctx: ShellContext) -> None:
        self.port = port
        self.code = code
        self.ctx = ctx
        self.lexed = lex(code, make=ctx.make)
        self.safe = [s + ctx.base for s in self.lexed.safe_line_starts]
        self.seen: set[int] = set()

    def run(self) -> None:
        for ref in self.lexed.var_refs:
            self.name_site(ref.start, ref.name, setting=False)
        for command in self.lexed.commands:
            self.command([w for w in command if not w.redirect])

    def raw(self, word: Word) -> str:
        return self.code[word.start : word.end]

    def todo(self, rule: Rule, offset: int, message: str) -> None:
        ctx = self.ctx
        if ctx.todo_above is not None:
            self.port.todo(rule, offset, message, above=ctx.todo_above, indent=ctx.todo_indent, prefix=ctx.todo_prefix)
            return
        above = max(s for s in self.safe if s <= offset)
        self.port.todo(rule, offset, message, above=above, prefix=ctx.todo_prefix)

    def name_site(self, start: int, name: str, setting: bool, value_at: int | None = None, end: int = 0) -> None:
        """``value_at``: where the value starts in an assignment word ending at ``end``."""
        if start not in self.seen:
            self.seen.add(start)
            base = self.ctx.base
            value = (base + value_at, self.code[value_at:end]) if value_at is not None else None
            rename_site(self.port, base + start, name, self.todo if setting else None, value)

    def command(self, args: list[Word]) -> None:
        """One simple command (its redirections left out): variables it sets, nvidia-smi, device and backend flags."""
        i = self.command_word_index(args)
        command_word = args[i] if i < len(args) else None
        if command_word is not None and command_word.literal in _DECLARE:
            for word in args[i + 1 :]:
                m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(=|$)", self.raw(word))
                if m and not self.raw(word).startswith("-"):
                    at = word.start + m.end() if m.group(2) else None
                    self.name_site(word.start, m.group(1), setting=True, value_at=at, end=word.end)
        if command_word is not None and (command_word.literal or "").rsplit("/", 1)[-1] == "nvidia-smi":
            _nvidia_smi(self.port, self.todo, self.ctx.base, command_word, [self.raw(w) for w in args[i + 1 :]])
        for word in args:  # an unquoted argument (`command -v nvidia-smi`); quoted text is text
            if word is not command_word and self.raw(word).rsplit("/", 1)[-1] == "nvidia-smi":
                self.todo(
                    NVIDIA_SMI_QUERY,
                    self.ctx.base + word.start,
                    "looks for nvidia-smi; the Ascend tool is npu-smi (`npu-smi info`)",
                )
        _flags(self.port, self.ctx.base, self.code, args)
        library_flags.port_shell_flags(
            self.port, self.ctx.base, self.code, args, i
        )  # --tf32, lm_eval --device (NPU8xx)
        installs.port_command(self, args, i)  # pip install of CUDA-only packages, CUDA wheel indexes (NPU600/603)

    def assignment(self, word: Word, m: re.Match[str]) -> None:
        plain = m.group(0).endswith("=") and not m.group(0).endswith("+=") and "[" not in m.group(0)
        at = word.start + m.end() if plain else None  # `X+=v`, `X[i]=v`: the value set is not the word's
        self.name_site(word.start, m.group(1), setting=True, value_at=at, end=word.end)

    def command_word_index(self, args: list[Word]) -> int:
        """Where the command's name is in ``args`` (``len(args)`` when there is none), after the assignments,
        keywords and wrappers (``sudo``, ``env`` and their options) before it; the variables these set are handled."""
        i = 0
        while i < len(args):
            m = _ASSIGNMENT.match(self.raw(args[i]))
            if m:
                self.assignment(args[i], m)
                i += 1
            elif args[i].literal in _PREFIX_WORDS:
                i += 1
            elif args[i].literal in ("sudo", "env"):
                i += 1
                while i < len(args) and (self.raw(args[i]).startswith("-") or _ASSIGNMENT.match(self.raw(args[i]))):
                    if m := _ASSIGNMENT.match(self.raw(args[i])):
                        self.assignment(args[i], m)
                    i += 1
            else:
                break
        return i


def _nvidia_smi(port: TextPort, todo, base: int, word: Word, args: list[str]) -> None:
    offset = base + word.start
    if not args:
        port.fix(NVIDIA_SMI, offset, [Edit(offset, base + word.end, "npu-smi info")], "nvidia-smi -> npu-smi info")
    elif any(a in ("-L", "--list-gpus") for a in args):
        todo(NVIDIA_SMI_QUERY, offset, COUNT_MESSAGE)
    else:
        todo(
            NVIDIA_SMI_QUERY,
            offset,
            f"nvidia-smi {' '.join(args)}: npu-smi has other options and output; see `npu-smi info -h`",
        )


def _flags(port: TextPort, base: int, code: str, args: list[Word]) -> None:
    for k, word in enumerate(args):
        text = code[word.start : word.end]
        flag, value_start, value = text, 0, None
        if "=" in text and text.startswith("--"):
            flag, value = text.split("=", 1)
            value_start = word.start + len(flag) + 1
        elif k + 1 < len(args) and text in DEVICE_FLAGS | BACKEND_FLAGS:
            value_start = args[k + 1].start
            value = code[args[k + 1].start : args[k + 1].end]
        if value is None:
            continue
        offset = base + value_start
        if flag in DEVICE_FLAGS and (m := _DEVICE_VALUE.fullmatch(value)):
            at = offset + len(m.group("q"))
            port.fix(DEVICE_FLAG, at, [Edit(at, at + 4, "npu")], f"{flag} {value} -> npu")
        elif flag in BACKEND_FLAGS and (m := _BACKEND_VALUE.fullmatch(value)):
            items = m.group("inner").split(",")
            new = [{"nccl": "hccl", "cuda:nccl": "npu:hccl"}.get(item, item) for item in items]
            if new != items:
                at = offset + len(m.group("q"))
                port.fix(
                    BACKEND_FLAG,
                    at,
                    [Edit(at, at + len(m.group("inner")), ",".join(new))],
                    f"{flag} {m.group('inner')} -> {','.join(new)}",
                )


class ShellHandler:
    def port(self, data: bytes, selection: Selection, options: PortOptions):
        from ascend_port.core.porting import Ported
        from ascend_port.core.sources import decode_text

        source = decode_text(data)
        port = TextPort(source.text, selection, options)
        port_shell_code(port, source.text)
        switches.port_shell_switches(port, source.text)  # NPU624: only in a script edited for another reason
        run_settings.add_run_settings(port, source.text)  # NPU902: the same, and last (it counts the edits made)
        return Ported(source, port.result(), port.findings)
