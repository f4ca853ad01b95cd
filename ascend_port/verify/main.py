"""`ascend-port verify`: find the commands, run them under the emulator, compare with the original, write the
report (and the kit). Returns the exit code: 0 all started, 1 one failed, 2 usage errors, 130 interrupted."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ascend_port.core.interrupts import test_sigint
from ascend_port.emulate import runner
from ascend_port.verify import commands as found
from ascend_port.verify import execute, render
from ascend_port.verify.classify import CAUSES
from ascend_port.verify.session import Result, Verification, run_commands

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class VerifyError(Exception):
    """A usage error: the message names the file or option and the reason."""


@dataclass
class VerifyOptions:
    path: Path
    timeout: float = 120.0
    torch_npu: str | None = None
    devices: int = 1
    compare: bool = False
    original: Path | None = None
    base: str | None = None
    seed: int = 0
    losses: int = 20
    reference: Path | None = None
    kit: Path | None = None
    output_format: str = "text"
    output: Path | None = None
    verbose: bool = False  # -v: a failed command's output (its traceback) on stderr, and each command's argv


def _check(options: VerifyOptions) -> Path:
    if options.output_format not in render.FORMATS:
        raise VerifyError(f"--format {options.output_format!r}: use one of {', '.join(render.FORMATS)}")
    if not options.path.is_dir():
        raise VerifyError(f"{options.path}: not a folder (give the ported project's folder)")
    if options.timeout <= 0 or options.devices < 1 or options.losses < 1:
        raise VerifyError("--timeout, --devices and --losses must be positive")
    if (options.original or options.base) and not options.compare:
        raise VerifyError("--original and --base go with --compare")
    if options.original is not None and not options.original.is_dir():
        raise VerifyError(f"--original {options.original}: not a folder")
    return options.path.resolve()


def _line(result: Result) -> str:
    line = f"{render.status(result)}: {result.name} ({result.seconds:g} s)"
    if result.failure is not None:
        line += f": {CAUSES[result.failure.cause]}"
    return line


def _commands(options: VerifyOptions, root: Path) -> tuple[dict, found.Todos, list[found.Command]]:
    """The project's verify table, its TODOs and the commands to run (the table's, else those found)."""
    try:
        table = found.read_table(root)
    except found.CommandsError as error:
        raise VerifyError(str(error)) from None
    todos = found.find_project_todos(root)
    commands = found.configured(root, table) or found.discovered(root, todos, options.timeout)
    for command in commands:
        command.timeout = command.timeout or options.timeout
        if command.kind == "config":  # (a command the emulator cannot run is the table's error, said before any run)
            try:
                runner.resolve_command(list(command.argv))
            except runner.UsageError as error:
                raise VerifyError(f"{root / 'pyproject.toml'} {found.VERIFY_TABLE} {command.name!r}: {error}") from None
    if not commands:
        raise VerifyError(f"{root}: nothing to run: no {found.VERIFY_TABLE} commands, no module, script or tests found")
    return table, todos, commands


def run_verify(options: VerifyOptions, say: Callable[[str], None] | None) -> int:
    root = _check(options)
    table, todos, commands = _commands(options, root)
    if say:
        say(
            f"verify: {len(commands)} command(s) in {root}"
            + (" (from pyproject.toml)" if table.get("commands") else "")
        )
    release, origin = _target(root, options.torch_npu)
    if say:
        say(f"verify: emulating torch_npu {release} ({origin})")
    with tempfile.TemporaryDirectory(prefix="ascend-port-verify-") as scratch:
        try:
            target, api = runner.target_api(release, Path(scratch))
        except runner.UsageError as error:
            raise VerifyError(str(error)) from None
        verification = Verification(str(root), target)
        setup = execute.Setup(
            root, options.devices, api, seed=options.seed if options.compare else None, losses=options.losses
        )

        def progress(command: found.Command, results: list[Result]) -> None:
            for result in results:
                if say:
                    say(_line(result))
                if say and options.verbose:
                    say(f"  argv: {shlex.join(result.argv)}")
                    for line in result.output_tail.splitlines() if not result.started else ():
                        say(f"  | {line}")
            test_sigint(f"verify:{len(verification.results)}")

        # the original is found (and extracted) first: a usage error must not come after minutes of runs
        original = _original(options, root, Path(scratch) / "original") if options.compare else None
        with _SigintAsKeyboardInterrupt():
            run_commands(commands, setup, todos, verification, progress)
            if original is not None and not verification.interrupted:
                try:
                    _compare(options, root, original, commands, verification)
                except KeyboardInterrupt:
                    verification.interrupted = True
    _write_report(options, verification)
    if options.kit is not None and not verification.interrupted:
        kit = _write_kit(options, root, commands, verification, target)
        if say:
            say(f"verify: kit for the Ascend host written: {kit}")
    for problem in verification.errors:
        print(f"error: {problem}", file=sys.stderr)
    if verification.interrupted:
        return EXIT_INTERRUPTED
    if verification.errors:
        return EXIT_USAGE
    return EXIT_FAILED if verification.failed else EXIT_OK


def _target(root: Path, flag: str | None) -> tuple[str | None, str]:
    """The release to emulate: --torch-npu, else the one the port targeted (the project's [tool.ascend-port]
    torch-npu, else its torch pin's), else the newest; and where it comes from."""
    from ascend_port.run import config as project_config

    if flag is not None:
        return flag, "--torch-npu"
    try:
        settings = project_config.resolve([root])
    except project_config.ConfigError as error:
        raise VerifyError(str(error)) from None
    origin = settings.origins.get(project_config.TARGET_KEY, project_config.DEFAULT)
    return settings.target, project_config.origin_name(settings, origin)


class _SigintAsKeyboardInterrupt:
    """SIGINT raises KeyboardInterrupt here even where a caller installed another handler (the child runs in its
    own session: the terminal's Ctrl-C reaches only us, and execute.run kills the child's group)."""

    def __enter__(self) -> None:
        self._saved = None
        if threading.current_thread() is threading.main_thread():
            self._saved = signal.signal(signal.SIGINT, signal.default_int_handler)

    def __exit__(self, *exc: object) -> None:
        if self._saved is not None:
            signal.signal(signal.SIGINT, self._saved)


def _original(options: VerifyOptions, root: Path, folder: Path) -> Path:
    """--compare's original project: --original, else --base or the commit before the port, extracted."""
    from ascend_port.verify.compare import CompareError, base_ref, extract

    if options.original is not None:
        return options.original.resolve()
    folder.mkdir()
    try:
        return extract(root, options.base or base_ref(root), folder)
    except CompareError as error:
        raise VerifyError(str(error)) from None


def _runs_pytest(argv: list[str]) -> bool:
    words = [Path(word).name for word in argv[:3]]
    return bool(words) and (words[0] in ("pytest", "py.test") or words[1:3] == ["-m", "pytest"])


def _compare(
    options: VerifyOptions, root: Path, original: Path, commands: list[found.Command], verification: Verification
) -> None:
    from ascend_port.verify.compare import compare

    # A test suite judges itself: its losses are those of many tests, not one training run to hold a port to.
    chosen = [c for c in commands if c.kind == "config" and not _runs_pytest(c.argv)]
    entries, reference = compare(chosen, verification.results, original, options.seed, options.losses)
    verification.compare, verification.reference = entries, reference
    path = options.reference or root / ".ascend-port" / "verify-reference.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(reference, indent=2) + "\n", "utf-8")
    except OSError as error:  # (the report still comes: it holds the reference too)
        verification.errors.append(f"cannot write the reference {path}: {error.strerror or error}")


def _write_report(options: VerifyOptions, verification: Verification) -> None:
    text = render.render(verification, options.output_format)
    if options.output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        options.output.write_text(text, "utf-8")
    except OSError as error:
        raise VerifyError(f"cannot write {options.output}: {error.strerror or error}") from None


def _write_kit(
    options: VerifyOptions, root: Path, commands: list[found.Command], verification: Verification, target: str
) -> Path:
    try:
        from ascend_port.verify.kit import write_kit  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise VerifyError("--kit: this ascend-port has no kit writer (ascend_port/verify/kit.py)") from None
    runnable = [
        {"name": c.name, "argv": [os.path.basename(a) if a == sys.executable else a for a in c.argv]}
        for c in commands
        if c.kind != "import"
    ]
    assert options.kit is not None
    return Path(write_kit(options.kit, root, runnable, verification.reference, target))
