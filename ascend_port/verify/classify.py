"""Why a command failed, in words: the innermost frame of the failing traceback in the project's code, and the
cause, checked in this order: a name missing in the target release, an emulator limit, CUDA left by the port, a
TODO at the failing line, a missing dependency, a TODO line further up the failing stack, else an error in the
program."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')
EXCEPTION = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Warning|Interrupt|Failure|error))(?::\s?(?P<text>.*))?$"
)
# pytest's frames: `path:line: in function` (--tb=short, collection errors) or `path:line: ExceptionType` (the
# location line that closes a section of the default long traceback)
PYTEST_FRAME = re.compile(r"^(?P<file>[^\s:][^:]*\.py):(?P<line>\d+):(?: in (?P<func>.+)| \w.*)?\s*$")
MISSING_MODULE = re.compile(r"No module named '(?P<name>[\w.]+)'")
CUDA = re.compile(
    r"Torch not compiled with CUDA enabled|Found no NVIDIA driver|CUDA driver|\bnccl\b|NCCL|torch\.cuda|"
    r"\bcuda\b|\.cuda\(|CUDA_VISIBLE_DEVICES|cudnn",
    re.IGNORECASE,
)
COMPILER = re.compile(r"^torch\._(?:inductor|dynamo)\.|InductorError|BackendCompilerFailed")
NOT_EMULATED = "not emulated by ascend-port emulate"

CAUSES = {
    "absent": "a name missing in the target torch_npu release",
    "emulator": "an emulator limit",
    "cuda": "CUDA left by the port",
    "todo": "an ascend-port TODO on the executed path",
    "dependency": "a missing dependency",
    "timeout": "timed out",
    "program": "an error in the program",
}


@dataclass
class Frame:
    file: str
    line: int
    function: str
    source: str = ""


@dataclass
class Failure:
    cause: str  # a key of CAUSES
    detail: str  # the cause in words, with the specifics (the exception line, the name, the TODO)
    frame: Frame | None = None  # the innermost frame in project code
    exception: str = ""


def last_traceback(output: str) -> tuple[list[Frame], str]:
    """The frames and exception line of the last traceback in ``output`` (a chained one's last part)."""
    lines = output.splitlines()
    start = max((i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")), default=-1)
    frames: list[Frame] = []
    exception = ""
    if start < 0:
        if any(line.startswith("E   ") for line in lines):
            return _pytest_short(lines)
        tail = [line for line in lines if EXCEPTION.match(line.strip())]
        return [], tail[-1].strip() if tail else ""
    for index in range(start + 1, len(lines)):
        line = lines[index]
        match = FRAME.match(line)
        if match:
            source = lines[index + 1].strip() if index + 1 < len(lines) else ""
            frames.append(Frame(match["file"], int(match["line"]), match["func"], source))
        elif not line.startswith((" ", "\t")) and line.strip():
            exception = line.strip()
            # pytest --tb=native and chained errors: the exception line ends the block
            if EXCEPTION.match(exception) or ":" in exception:
                break
    return frames, exception


def _pytest_short(lines: list[str]) -> tuple[list[Frame], str]:
    """pytest's own traceback (a collection error is shown so whatever --tb says): ``path:line: in function``
    frames, each followed by its source, and the error on the ``E   `` lines after the last frame."""
    last_error = max(i for i, line in enumerate(lines) if line.startswith("E   "))
    first_error = last_error
    while first_error > 0 and lines[first_error - 1].startswith("E   "):
        first_error -= 1
    frames: list[Frame] = []
    for index in range(first_error - 1, -1, -1):
        if lines[index].startswith("___") or lines[index].startswith("Traceback:"):
            break
        match = PYTEST_FRAME.match(lines[index])
        if match:
            source = lines[index + 1].strip() if index + 1 < len(lines) else ""
            source = source if match["func"] else ""  # (a long traceback's location line closes its section)
            frames.insert(0, Frame(match["file"], int(match["line"]), match["func"] or "?", source))
    error = next(
        (line[4:].strip() for line in lines[first_error : last_error + 1] if EXCEPTION.match(line[4:].strip())), None
    )
    return frames, error or lines[first_error][4:].strip()


def frame_path(frame: Frame, root: Path) -> Path:
    """A frame's file, real; a relative one (pytest's) is relative to the root the command ran in."""
    path = Path(frame.file)
    return (path if path.is_absolute() else root / path).resolve()


def project_frame(frames: list[Frame], root: Path) -> Frame | None:
    real_root = root.resolve()
    for frame in reversed(frames):
        try:
            path = frame_path(frame, root)
        except (OSError, RuntimeError):
            continue
        if path.is_relative_to(real_root) and not {"site-packages", ".venv", "venv"} & set(path.parts):
            return frame
    return None


def _real(frame: Frame, root: Path) -> str | None:
    try:
        return str(frame_path(frame, root))
    except (OSError, RuntimeError):
        return None


def _project_packages(root: Path) -> set[str]:
    names = {p.stem for p in root.glob("*.py")} | {p.name for p in root.iterdir() if (p / "__init__.py").is_file()}
    src = root / "src"
    if src.is_dir():
        names |= {p.name for p in src.iterdir() if p.is_dir()}
    return names


def classify(output: str, root: Path, emulator: dict, todo_lines: dict[str, dict[int, int]]) -> Failure:
    """``todo_lines``: real path -> {code line: TODO comment line}. The TODO lines that ran are reported beside the
    cause, not as it: an import-time TODO runs before most failures without leading to them."""
    frames, exception = last_traceback(output)
    exception = exception or last_line(output)  # sys.exit("needs a CUDA GPU"): the last words are the error
    frame = project_frame(frames, root)
    absent = list(emulator.get("absent", {}))
    # (a hasattr() probe records a name too: only the one the error names is the cause)
    named = [name for name in absent if re.search(rf"\b{re.escape(name.rsplit('.', 1)[-1])}\b", exception)]
    if named:
        return Failure("absent", f"{', '.join(named)} (not in the target release): {exception}", frame, exception)
    if emulator.get("not_implemented") or NOT_EMULATED in output:
        names = ", ".join(emulator.get("not_implemented", {})) or exception
        return Failure("emulator", f"not emulated: {names}", frame, exception)
    if emulator and COMPILER.search(exception):
        # torch.compile's inductor on the emulated device: a real NPU compiles through torchair (or runs eager)
        return Failure("emulator", f"torch.compile on the emulated npu: {exception}", frame, exception)
    if CUDA.search(exception) or (frame is not None and CUDA.search(frame.source)):
        where = exception if CUDA.search(exception) else frame.source if frame else exception
        return Failure("cuda", where, frame, exception)
    if frame is not None:
        todo = todo_lines.get(str(frame_path(frame, root)), {}).get(frame.line)
        if todo is not None:
            return Failure("todo", f"the failing line carries the TODO at line {todo}: {exception}", frame, exception)
    missing = MISSING_MODULE.search(exception)
    if missing and exception.startswith(("ModuleNotFoundError", "ImportError")):
        top = missing["name"].split(".")[0]
        if top not in _project_packages(root):
            return Failure("dependency", f"{top} is not installed ({exception})", frame, exception)
    # A TODO line further up the failing stack led there; one that merely ran before (an import-time TODO) did not.
    for outer in reversed(frames):
        path = _real(outer, root)
        comment = todo_lines.get(path, {}).get(outer.line) if path else None
        if comment is not None:
            where = f"{Path(path).name}:{comment}"  # type: ignore[arg-type]
            return Failure("todo", f"the failing call passes the TODO at {where}: {exception}", frame, exception)
    return Failure("program", exception or "no output", frame, exception)


def last_line(output: str) -> str:
    """The program's last words (a ``sys.exit("message")`` prints no traceback)."""
    return next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "")
