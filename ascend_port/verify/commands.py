"""The commands `verify` runs: ``[tool.ascend-port.verify] commands`` of the project's pyproject.toml, else those
it finds: the import of every ported module (one process), ``--help`` of the console scripts and of the
``__main__`` scripts the launch scripts (*.sh) call, and the pytest suite."""

from __future__ import annotations

import ast
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ascend_port.run.discovery import discover
from ascend_port.run.todos import find_todos

VERIFY_TABLE = "[tool.ascend-port.verify]"
# folders whose modules are no part of what the project ships (their scripts run, or are run by, something else)
SKIPPED_FOLDERS = {"tests", "test", "docs", "examples", "benchmarks", "scripts", "build", "dist"}


class CommandsError(Exception):
    """The project's verify table is malformed (the message names the file and the key)."""


@dataclass
class Command:
    name: str  # what the report calls it ("python train.py --max-steps 2", "import", "pytest")
    argv: list[str]  # as run (python is sys.executable); relative to the project root
    kind: str  # "config", "import", "help", "pytest"
    modules: list[tuple[str, str]] = field(default_factory=list)  # kind "import": (sys.path entry, module)
    timeout: float | None = None
    original_argv: list[str] | None = None  # --compare: the original's own arguments (e.g. --device cpu)


@dataclass
class Todos:
    """The ascend-port TODOs of the project: the comment lines, and the code line each is about."""

    by_file: dict[str, dict[int, int]] = field(default_factory=dict)  # real path -> {code line: comment line}

    def code_lines(self) -> dict[str, list[int]]:
        return {path: sorted(lines) for path, lines in self.by_file.items()}


def read_table(root: Path) -> dict:
    """``[tool.ascend-port.verify]`` of ``root/pyproject.toml`` ({} when there is none)."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        data = tomlkit.parse(path.read_text("utf-8")).unwrap()
    except (OSError, UnicodeDecodeError, TOMLKitError) as error:
        raise CommandsError(f"{path}: cannot read: {error}") from None
    table = data.get("tool", {}).get("ascend-port", {}).get("verify", {})
    if not isinstance(table, dict):
        raise CommandsError(f"{path} {VERIFY_TABLE}: not a table")
    commands = table.get("commands", [])
    if not isinstance(commands, list) or not all(_valid_entry(c) for c in commands):
        raise CommandsError(
            f"{path} {VERIFY_TABLE} commands: a list of command lines (strings, or tables "
            '{run = "...", original = "..."} where --compare runs the original with other arguments)'
        )
    timeout = table.get("timeout")
    if timeout is not None and (not isinstance(timeout, (int, float)) or timeout <= 0):
        raise CommandsError(f"{path} {VERIFY_TABLE} timeout: a number of seconds")
    return table


def _valid_entry(entry: object) -> bool:
    if isinstance(entry, str):
        return bool(entry.strip())
    if not isinstance(entry, dict) or not set(entry) <= {"run", "original"}:
        return False
    return all(isinstance(entry.get(k, "-"), str) and entry.get(k, "-").strip() for k in ("run", "original"))


def configured(root: Path, table: dict) -> list[Command]:
    commands = []
    for entry in table.get("commands", []):
        line = entry if isinstance(entry, str) else entry["run"]
        command = Command(line, shlex.split(line), "config", timeout=table.get("timeout"))
        if isinstance(entry, dict) and "original" in entry:
            command.original_argv = shlex.split(entry["original"])
        commands.append(command)
    return commands


def find_project_todos(root: Path) -> Todos:
    """Each TODO comment and the code line it is about: the same line for a trailing comment, else the next line
    that is neither blank nor a comment (the port writes its TODOs above the statement)."""
    todos = Todos()
    report = find_todos([root])
    lines_of: dict[str, list[str]] = {}
    for todo in report.todos:
        path = Path(todo.path).resolve()
        if path.suffix != ".py":
            continue
        key = str(path)
        if key not in lines_of:
            lines_of[key] = path.read_text("utf-8", errors="replace").splitlines()
        lines = lines_of[key]
        code = todo.line
        if lines[todo.line - 1].lstrip().startswith("#"):
            code = next(
                (
                    n
                    for n in range(todo.line + 1, len(lines) + 1)
                    if lines[n - 1].strip() and not lines[n - 1].lstrip().startswith("#")
                ),
                todo.line,
            )
        todos.by_file.setdefault(key, {})[code] = todo.line
    return todos


def _python_files(root: Path) -> list[Path]:
    return sorted(discover([root], lambda p: p.suffix == ".py"))


def _module_of(path: Path, root: Path) -> tuple[str, str] | None:
    """(sys.path entry, dotted name) of a file: its folders up to the first without __init__.py make the package."""
    parts = [path.stem] if path.name != "__init__.py" else []
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder != root.parent:
        parts.insert(0, folder.name)
        folder = folder.parent
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return str(folder), ".".join(parts)


SAFE_TOP_LEVEL = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AnnAssign,
    ast.If,
    ast.Try,
)


def _safe_to_import(path: Path) -> bool:
    """A loose script is imported only when its top level only defines things (or is __main__-guarded): importing
    nanoGPT's train.py would train."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError, OSError):
        return True  # the import reports the syntax error
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # docstring
        if not isinstance(node, SAFE_TOP_LEVEL):
            return False
    return True


NPU_NAME = re.compile(r"\btorch_npu\b|\.npu\b|[\"']npu\b")  # (not "input")


def _ported(path: Path, todos: Todos) -> bool:
    if str(path.resolve()) in todos.by_file:
        return True
    return NPU_NAME.search(path.read_text("utf-8", errors="replace")) is not None


def import_command(root: Path, todos: Todos) -> Command | None:
    files = [p for p in _python_files(root) if p.name not in ("setup.py", "conftest.py", "__main__.py")]
    files = [p for p in files if not (set(p.relative_to(root).parts[:-1]) & SKIPPED_FOLDERS)]
    chosen = [p for p in files if _ported(p, todos)] or files
    modules = []
    for path in chosen:
        found = _module_of(path, root)
        if found is None:
            continue
        in_package = found[1].count(".") > 0 or path.name == "__init__.py"
        if in_package or _safe_to_import(path):
            modules.append(found)
    if not modules:
        return None
    return Command(f"import ({len(modules)} module{'s' if len(modules) != 1 else ''})", [], "import", modules)


ENTRY = re.compile(r"""['"]\s*([\w.-]+)\s*=\s*([\w.]+)\s*:\s*([\w.]+)\s*['"]""")


def console_scripts(root: Path) -> dict[str, str]:
    """name -> "module:function" from pyproject's [project.scripts] and setup.py's console_scripts."""
    found: dict[str, str] = {}
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        import tomlkit

        try:
            data = tomlkit.parse(pyproject.read_text("utf-8")).unwrap()
            found.update({k: v for k, v in data.get("project", {}).get("scripts", {}).items() if isinstance(v, str)})
        except Exception:  # a broken pyproject is the config's error, reported elsewhere
            pass
    setup = root / "setup.py"
    if setup.is_file():
        text = setup.read_text("utf-8", errors="replace")
        if "console_scripts" in text:
            for name, module, function in ENTRY.findall(text):
                found.setdefault(name, f"{module}:{function}")
    return found


LAUNCH = re.compile(r"(?:^|[\s;&|(])(?:python3?|torchrun(?:\s+--?[\w-]+(?:[= ]\S+)?)*)\s+(-m\s+[\w.]+|[\w./-]+\.py)\b")


def launched_scripts(root: Path) -> list[list[str]]:
    """``python x.py`` / ``python -m x`` / ``torchrun ... x.py`` in the project's *.sh, as [script] or [-m, module],
    for the scripts with a ``__main__`` guard (or modules with a __main__.py)."""
    found: list[list[str]] = []
    for sh in sorted(discover([root], lambda p: p.suffix == ".sh")):
        text = sh.read_text("utf-8", errors="replace")
        for match in LAUNCH.finditer(text):
            target = match.group(1)
            if target.startswith("-m"):
                argv = ["-m", target.split()[-1]]
            else:
                script = next((c for c in (sh.parent / target, root / target) if c.is_file()), None)
                if script is None or "__main__" not in script.read_text("utf-8", errors="replace"):
                    continue
                argv = [str(script.resolve().relative_to(root.resolve()))]
            if argv not in found:
                found.append(argv)
    return found


def has_tests(root: Path) -> bool:
    for folder in ("tests", "test"):
        if (root / folder).is_dir() and any((root / folder).rglob("test_*.py")):
            return True
    return any(root.glob("test_*.py"))


def discovered(root: Path, todos: Todos, timeout: float) -> list[Command]:
    commands = []
    imports = import_command(root, todos)
    if imports is not None:
        commands.append(imports)
    python = sys.executable
    paths = ["src"] if (root / "src").is_dir() else []  # a src layout, not installed: its package is there
    for name, target in sorted(console_scripts(root).items()):
        module, _, function = target.split("[")[0].strip().partition(":")  # (an entry point may name extras)
        code = (
            f"import functools, importlib, sys; sys.argv = [{name!r}, '--help']; sys.path[:0] = {paths!r}; "
            f"sys.exit(functools.reduce(getattr, {function.strip()!r}.split('.'), importlib.import_module({module.strip()!r}))())"
        )
        commands.append(Command(f"{name} --help", [python, "-c", code], "help"))
    for argv in launched_scripts(root):
        commands.append(Command(f"python {' '.join(argv)} --help", [python, *argv, "--help"], "help"))
    if has_tests(root):
        # --tb=native: tracebacks the classifier reads like any other; no -m: CUDA-marked tests run on the npu
        argv = [python, "-m", "pytest", "-x", "-q", "--tb=native", "-p", "no:cacheprovider"]
        commands.append(Command("pytest", argv, "pytest"))
    for command in commands:
        command.timeout = timeout
    return commands
