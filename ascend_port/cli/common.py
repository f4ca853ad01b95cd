"""What the commands share: the app, the options, the terminal (consoles and verbosity) and the run with its progress
and notes."""

from __future__ import annotations

import dataclasses
import gc
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from ascend_port.core.findings import TODO_PREFIX
from ascend_port.core.words import counted
from ascend_port.run import config as project_config
from ascend_port.run.changes import ChangesError, changed_paths
from ascend_port.run.engine import RunConfig, RunResult, run

# What only some commands need (GitPython and the git workflow, the review, rich's markdown, tables and progress
# bars) is imported where it is used: a run answered from the cache takes less time than importing all of it.
# gitflow.DEFAULT_BRANCH, spelled out for the --branch help (tests/test_startup.py keeps the two equal).
DEFAULT_BRANCH = "ascend-port/npu"


app = typer.Typer(
    name="ascend-port",
    help="Port PyTorch projects from NVIDIA CUDA to Huawei Ascend NPUs (torch_npu).",
    no_args_is_help=True,
    # --install-completion / --show-completion: typer builds the two options from what it has already imported, and
    # the shell is detected only when one of them is given (tests/test_cli_help.py, tests/test_startup.py).
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    # markdown: "[tool.ascend-port]" in a docstring is text, not a rich style tag, and a docstring's line breaks are
    # not kept in the help (rich mode keeps them). Typer is pinned below 0.27 (pyproject.toml): 0.27 and later show
    # "<bool>", "<list[str]>" and "{paths}" in every help.
    rich_markup_mode="markdown",
)


COLOR_MODES = ("auto", "always", "never")


def _console(stderr: bool, color: str = "auto") -> Console:
    """``auto``: rich's own choice (a terminal, unless NO_COLOR is set; FORCE_COLOR forces colour). stderr's lines
    (errors, notes, the summary) are never hard-wrapped: a message cut at 80 columns cannot be grepped."""
    return Console(
        stderr=stderr,
        highlight=False,
        soft_wrap=stderr,
        force_terminal=True if color == "always" else None,
        no_color={"always": False, "never": True}.get(color),  # (auto: None, NO_COLOR decides)
        color_system=None if color == "never" else "auto",
    )


EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


PathsArg = Annotated[list[Path], typer.Argument(help="Files or folders to port.", show_default=False)]


SelectOpt = Annotated[
    list[str] | None, typer.Option("--select", help="Rule IDs or prefixes to run (e.g. NPU1,NPU205; default ALL).")
]


IgnoreOpt = Annotated[list[str] | None, typer.Option("--ignore", help="Rule IDs or prefixes to skip.")]


MinConfidenceOpt = Annotated[
    str | None,
    typer.Option(
        "--min-confidence", help="Run only rules at or above this confidence: high, medium or low (default low)."
    ),
]


AttentionOpt = Annotated[
    str | None,
    typer.Option("--attention-backend", help="Target of the attention rewrites: torch_npu (default) or mindiesd."),
]


OtherDevicesOpt = Annotated[
    str | None,
    typer.Option(
        "--other-devices",
        help="keep (default): in a project that also runs on other devices (it supports the NPU on its own), report "
        "CUDA code instead of rewriting it; drop: rewrite it in place (an NPU-only fork).",
    ),
]


TorchNpuOpt = Annotated[
    str | None,
    typer.Option(
        "--torch-npu",
        metavar="VERSION",
        help="The torch-npu release to port for (2.5.1, 2.5.1.post1; default: the release for the project's own "
        "torch pin, else the newest known): the port emits only what it has.",
    ),
]


ChangedSinceOpt = Annotated[
    str | None,
    typer.Option(
        "--changed-since",
        metavar="REF",
        help="Only files changed since this git ref: committed since the merge base "
        "with HEAD, staged, unstaged or untracked.",
    ),
]


JobsOpt = Annotated[int, typer.Option("--jobs", "-j", help="Worker processes (0: all cores).")]


ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude",
        metavar="GLOB",
        help="Glob of paths to skip (repeatable), matched against each file's path as given (so relative to the "
        "current folder), its name, or a folder name in it; replaces the configuration's exclude, whose globs are "
        "relative to its pyproject.toml.",
    ),
]


ExitZeroOpt = Annotated[
    bool,
    typer.Option("--exit-zero", help="Exit 0 even when there are findings or pending changes (errors still exit 2)."),
]


QuietOpt = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="Print only findings, diffs and errors: no progress, notes, warnings or summary."
    ),
]


VerboseOpt = Annotated[
    bool,
    typer.Option(
        "--verbose", "-v", help="Also print where the configuration comes from, every skipped file and the time taken."
    ),
]


ColorOpt = Annotated[
    str,
    typer.Option(
        "--color",
        metavar="auto|always|never",
        help="Colour the output: auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR forces it), always, never.",
    ),
]


NoCacheOpt = Annotated[
    bool,
    typer.Option(
        "--no-cache", help="Port every file afresh: neither read nor write the result cache (~/.cache/ascend-port)."
    ),
]


@dataclasses.dataclass(frozen=True)
class Terminal:
    """Where a command prints and how much: its two consoles (results on stdout; errors, notes, progress and the
    summary on stderr) and its -q/-v. Each command makes one from its flags and hands it down."""

    out: Console = dataclasses.field(default_factory=lambda: _console(stderr=False))
    err: Console = dataclasses.field(default_factory=lambda: _console(stderr=True))
    quiet: bool = False
    verbose: bool = False
    verb: str = "porting"  # the progress label: `scan` is "scanning"

    @classmethod
    def for_flags(cls, quiet: bool, verbose: bool, color: str, verb: str) -> Terminal:
        """The terminal of a command given -q/-v/--color (refused: contradictory or unknown values)."""
        if color not in COLOR_MODES:
            raise cls().fail(f"--color {escape(color)!r}: use one of {', '.join(COLOR_MODES)}")
        if quiet and verbose:
            raise cls().fail("--quiet and --verbose cannot be combined")
        return cls(_console(stderr=False, color=color), _console(stderr=True, color=color), quiet, verbose, verb)

    def fail(self, message: str) -> typer.Exit:
        """Print ``message`` as an error; the exit (code 2) for the caller to raise."""
        self.error(message)
        return typer.Exit(EXIT_ERROR)

    def error(self, message: str) -> None:
        """``message`` (rich markup, escaped by the caller) as an error line on stderr."""
        self.err.print(f"[red]error:[/red] {message}")


TABLE_MIN_WIDTH = 100  # narrower, the table folds its messages into a column of a few words: concise instead


TABLE_MESSAGE_WIDTH = 40  # and the message column must keep this much beside the longest file:line


PROGRESS_EVERY = 5.0  # seconds between two progress lines when stderr is not a terminal (a CI log)


def default_format(result: RunResult, term: Terminal) -> str:
    """The table on a terminal wide enough for it (COLUMNS or the terminal's size) and for its longest file:line
    beside a readable message; one finding a line elsewhere: in a pipe, a file or a CI log the table's wrapped cells
    cannot be grepped, and on a narrow terminal its message column is a few words wide."""
    if not sys.stdout.isatty() or term.out.width < TABLE_MIN_WIDTH:
        return "concise"
    location = max((len(f"{file.path}:{f.line}") for file in result.files for f in file.findings), default=0)
    # (the rule and confidence columns, and the table's separators and padding: 27 columns)
    return "text" if term.out.width >= location + 27 + TABLE_MESSAGE_WIDTH else "concise"


def _colour_enabled(console: Console) -> bool:
    return console.is_terminal and console.color_system is not None and not console.no_color


def print_concise(result: RunResult, term: Terminal) -> None:
    from ascend_port.reports.text import concise_lines

    stream = term.out.file
    stream.writelines(concise_lines(result, _colour_enabled(term.out)))
    stream.flush()


def _progress_lines(started: float, term: Terminal) -> Callable[[int, int], None]:
    """Progress for a log (stderr is not a terminal): a line every PROGRESS_EVERY seconds, none on a short run."""
    last = [started]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY and done < total:
            last[0] = now
            term.err.print(f"{term.verb}: {done}/{total} files, {now - started:.0f} s", soft_wrap=True)

    return report


def _warn_nothing_found(paths: list[Path], result: RunResult, changed_since: str | None, term: Terminal) -> None:
    """A run that found no file to port says so (a typo in a path, an --exclude that matches everything)."""
    if result.files or term.quiet:
        return
    where = ", ".join(str(p) for p in paths)
    why = f" changed since {changed_since}" if changed_since is not None else ""
    left_out = f" ({len(result.skipped)} left out by ignore rules or --exclude)" if result.skipped else ""
    term.err.print(escape(f"warning: no file to port{why} under {where}{left_out}"), style="yellow", soft_wrap=True)


def settings_for(
    paths: list[Path], flags: project_config.Flags, term: Terminal, cached_rules: bool = False
) -> project_config.Settings:
    """``[tool.ascend-port]`` of the nearest pyproject.toml above ``paths[0]``, overridden by the flags given.
    ``cached_rules``: the rule catalogue may come from the result cache (see cache.use_stored_rules)."""
    if cached_rules:
        from ascend_port.run.cache import use_stored_rules

        use_stored_rules()
    try:
        settings = project_config.resolve(paths, flags.keys())
    except project_config.ConfigError as error:
        raise term.fail(escape(str(error))) from None
    if term.verbose:
        origin = settings.origins.get(project_config.TARGET_KEY, project_config.DEFAULT)
        source = settings.source or "no [tool.ascend-port] table: the defaults"
        target = f"torch_npu {settings.target} ({project_config.origin_name(settings, origin)})"
        term.err.print(escape(f"configuration: {source}; target: {target}"))
    return settings


def make_config(settings: project_config.Settings, jobs: int, term: Terminal, no_cache: bool = False) -> RunConfig:
    if jobs < 0:
        raise term.fail("--jobs must be 0 (all cores) or a positive number")
    config = settings.run_config(jobs)
    return dataclasses.replace(config, cache=False) if no_cache else config


def run_port(paths: list[Path], config: RunConfig, term: Terminal, changed_since: str | None = None) -> RunResult:
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise term.fail(f"no such file or directory: {missing[0]}")
    if changed_since is not None:
        try:
            paths = changed_paths(paths, config.exclude, changed_since)
        except ChangesError as error:
            raise term.fail(escape(str(error))) from None
    if standalone:
        # A short-lived process: what is loaded by now (the CLI, the rules, LibCST) lives until it exits. Taken out
        # of the collector's reach, it is not walked by every collection (in the forked workers too), nor at exit,
        # nor copied into the workers by the collector's writes. And a port makes many objects (LibCST trees) but
        # few cycles: collecting the youngest generation every 700 allocations (Python's default) took a tenth of
        # the porting time; every 10,000 costs a few MiB at most (forked workers inherit both settings).
        gc.freeze()
        gc.set_threshold(GC_THRESHOLD, 50, 50)
    started = time.monotonic()
    try:
        result = _run_with_progress(paths, config, started, term)
    except KeyboardInterrupt:  # the port writes nothing until it has finished: every mode can say so
        term.err.print(INTERRUPTED_BEFORE_WRITING)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    _warn_nothing_found(paths, result, changed_since, term)
    if term.verbose:
        done = "scanned" if term.verb == "scanning" else "ported"
        term.err.print(escape(f"{counted(len(result.files), 'file')} {done} in {time.monotonic() - started:.1f} s"))
    return _note_skipped(result, term)


def _run_with_progress(paths: list[Path], config: RunConfig, started: float, term: Terminal) -> RunResult:
    """A progress bar on a terminal, a line every few seconds in a log, nothing with --quiet."""
    if term.quiet:
        return run(paths, config)
    if not sys.stderr.isatty():
        return run(paths, config, _progress_lines(started, term))
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn(term.verb),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=term.err,
        transient=True,
    ) as progress:
        task = progress.add_task("port", total=None)
        return run(paths, config, lambda done, total: progress.update(task, completed=done, total=total))


INTERRUPTED_BEFORE_WRITING = "interrupted: nothing was written"
SKIPPED_SHOWN = 5  # names of skipped files on stderr, per kind; the reports list them all


def note_run(result: RunResult, term: Terminal) -> None:
    if term.quiet:
        return
    for note in result.notes:
        term.err.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True)


def _note_skipped(result: RunResult, term: Terminal) -> RunResult:
    """One stderr line per kind of skip (ignore rules, excludes): how many files were left out, and the first names.
    Never silent: a .gitignore that matches a package must be seen (but with --quiet); --verbose names them all."""
    shown = None if term.verbose else SKIPPED_SHOWN
    in_json = ' (all in the JSON report\'s "skipped": --format json)'
    groups = [
        (label, [s.path for s in result.skipped if s.kind == kind], in_json)
        for kind, label in (("gitignore", "ignored by git"), ("exclude", "excluded"))
    ]
    unread: dict[str, list[str]] = {}  # files the port could not read as source (binary .py), by reason
    for file in result.files:
        if file.skipped:
            unread.setdefault(file.skipped, []).append(file.path)
    groups += [(reason, names, "") for reason, names in unread.items()]
    for label, names, more in groups:
        if names and not term.quiet:
            line = f"{counted(len(names), 'file')} skipped ({label}): {', '.join(names[:shown])}"
            if shown is not None and len(names) > shown:
                line += f" and {len(names) - SKIPPED_SHOWN} more{more}"
            term.err.print(escape(line), soft_wrap=True)
    note_run(result, term)
    return result


def report_errors(result: RunResult, term: Terminal) -> None:
    for file in result.errors:
        term.error(escape(f"{file.path}: {file.error}"))


def findings_counts(rewrites: int, todos: int) -> str:
    return f"{counted(rewrites, 'rewrite')}, {counted(todos, 'TODO')}"


def todo_comments(result: RunResult) -> int:
    """The TODO findings that are comments in the code after the port (what `ascend-port todos` finds then): fewer
    than the TODO findings where a finding is only reported (a CUDA source's kernels) or two share one comment."""
    marker = TODO_PREFIX.strip("# ").encode()
    count = 0
    for file in result.files:
        todos = sum(1 for f in file.findings if f.kind != "info" and not f.rewrites)
        if not todos:
            continue
        if file.new_bytes is not None:
            text = file.new_bytes
        else:
            try:
                text = Path(file.path).read_bytes()
            except OSError:
                continue
        count += min(todos, sum(1 for line in text.splitlines() if marker in line))
    return count


def totals_line(result: RunResult, written: bool = False) -> str:
    """The summary line: files checked and to change (``written``: ported, after `apply` wrote them), the rewrites
    and TODOs, the notes and the files with errors."""
    # "compatible as it is" notes (the info kind) are neither rewrites nor TODOs. Once written: what was written,
    # the accepted part of a reviewed file, and nothing of a file that could not be written (read-only).
    counted_files = [file for file in result.files if not (written and file.error)]
    findings = [
        f for file in counted_files for f in (file.accepted if written and file.accepted is not None else file.findings)
    ]
    kinds = Counter(f.kind for f in findings)
    rewrites = sum(1 for f in findings if f.kind != "info" and f.rewrites)
    todos = kinds.total() - kinds["info"] - rewrites
    changed = len(result.changed)
    # (a file the port creates was not there to check; one it could not read as source was skipped, and named so)
    checked = len(result.files) - len(result.created) - sum(1 for file in result.files if file.skipped)
    files = (
        f"{counted(changed, 'file')} ported ({checked} checked)"
        if written
        else f"{counted(checked, 'file')} checked, {changed} to change"
    )
    comments = todo_comments(result)
    return (
        f"{files}: {findings_counts(rewrites, todos)}"
        + (f" ({comments} of them as a comment in the code)" if comments != todos else "")
        + (f", {counted(kinds['info'], 'note')} (nothing to do)" if kinds["info"] else "")
        + (f", {counted(len(result.errors), 'file')} with errors" if result.errors else "")
    )


standalone = False  # True in the `ascend-port` process itself (main), not when the app is called in-process


GC_THRESHOLD = 10_000  # allocations between two collections of the youngest generation (Python's default: 700)
