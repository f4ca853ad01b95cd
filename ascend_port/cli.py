"""The ``ascend-port`` command line. Exit codes follow ruff and black: 0 clean, 1 findings or pending changes,
2 usage or tool error (including files that could not be read or parsed)."""

from __future__ import annotations

import dataclasses
import gc
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from ascend_port import __version__
from ascend_port.rules.registry import all_rules, get_rule
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


out = _console(stderr=False)
err = _console(stderr=True)

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

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


def _fail(message: str) -> typer.Exit:
    err.print(f"[red]error:[/red] {message}")
    return typer.Exit(EXIT_ERROR)


@dataclasses.dataclass
class OutputOptions:
    """What `scan` and `apply` print besides their results (findings, diffs, errors)."""

    quiet: bool = False
    verbose: bool = False
    verb: str = "porting"  # the progress label: `scan` is "scanning"


_output = OutputOptions()
TABLE_MIN_WIDTH = 100  # narrower, the table folds its messages into a column of a few words: concise instead
TABLE_MESSAGE_WIDTH = 40  # and the message column must keep this much beside the longest file:line
PROGRESS_EVERY = 5.0  # seconds between two progress lines when stderr is not a terminal (a CI log)


def _set_output(quiet: bool, verbose: bool, color: str, verb: str) -> None:
    """Apply -q/-v/--color for this command (module state: the CLI runs one command per process)."""
    global out, err, _output
    if color not in COLOR_MODES:
        raise _fail(f"--color {escape(color)!r}: use one of {', '.join(COLOR_MODES)}")
    if quiet and verbose:
        raise _fail("--quiet and --verbose cannot be combined")
    out, err = _console(stderr=False, color=color), _console(stderr=True, color=color)
    _output = OutputOptions(quiet, verbose, verb)


def _default_format(result: RunResult) -> str:
    """The table on a terminal wide enough for it (COLUMNS or the terminal's size) and for its longest file:line
    beside a readable message; one finding a line elsewhere: in a pipe, a file or a CI log the table's wrapped cells
    cannot be grepped, and on a narrow terminal its message column is a few words wide."""
    if not sys.stdout.isatty() or out.width < TABLE_MIN_WIDTH:
        return "concise"
    location = max((len(f"{file.path}:{f.line}") for file in result.files for f in file.findings), default=0)
    # (the rule and confidence columns, and the table's separators and padding: 27 columns)
    return "text" if out.width >= location + 27 + TABLE_MESSAGE_WIDTH else "concise"


def _colour_enabled(console: Console) -> bool:
    return console.is_terminal and console.color_system is not None and not console.no_color


def _print_concise(result: RunResult) -> None:
    from ascend_port.reports.text import concise_lines

    stream = out.file
    stream.writelines(concise_lines(result, _colour_enabled(out)))
    stream.flush()


def _progress_lines(started: float) -> Callable[[int, int], None]:
    """Progress for a log (stderr is not a terminal): a line every PROGRESS_EVERY seconds, none on a short run."""
    last = [started]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY and done < total:
            last[0] = now
            err.print(f"{_output.verb}: {done}/{total} files, {now - started:.0f} s", soft_wrap=True)

    return report


def _warn_nothing_found(paths: list[Path], result: RunResult, changed_since: str | None) -> None:
    """A run that found no file to port says so (a typo in a path, an --exclude that matches everything)."""
    if result.files or _output.quiet:
        return
    where = ", ".join(str(p) for p in paths)
    why = f" changed since {changed_since}" if changed_since is not None else ""
    left_out = f" ({len(result.skipped)} left out by ignore rules or --exclude)" if result.skipped else ""
    err.print(escape(f"warning: no file to port{why} under {where}{left_out}"), style="yellow", soft_wrap=True)


def _settings(paths: list[Path], flags: project_config.Flags, cached_rules: bool = False) -> project_config.Settings:
    """``[tool.ascend-port]`` of the nearest pyproject.toml above ``paths[0]``, overridden by the flags given.
    ``cached_rules``: the rule catalogue may come from the result cache (see cache.use_stored_rules)."""
    if cached_rules:
        from ascend_port.run.cache import use_stored_rules

        use_stored_rules()
    try:
        settings = project_config.resolve(paths, flags.keys())
    except project_config.ConfigError as error:
        raise _fail(escape(str(error))) from None
    if _output.verbose:
        origin = settings.origins.get(project_config.TARGET_KEY, project_config.DEFAULT)
        source = settings.source or "no [tool.ascend-port] table: the defaults"
        target = f"torch_npu {settings.target} ({project_config.origin_name(settings, origin)})"
        err.print(escape(f"configuration: {source}; target: {target}"))
    return settings


def _config(settings: project_config.Settings, jobs: int, no_cache: bool = False) -> RunConfig:
    if jobs < 0:
        raise _fail("--jobs must be 0 (all cores) or a positive number")
    config = settings.run_config(jobs)
    return dataclasses.replace(config, cache=False) if no_cache else config


def _run(paths: list[Path], config: RunConfig, changed_since: str | None = None) -> RunResult:
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise _fail(f"no such file or directory: {missing[0]}")
    if changed_since is not None:
        try:
            paths = changed_paths(paths, config.exclude, changed_since)
        except ChangesError as error:
            raise _fail(escape(str(error))) from None
    if _standalone:
        # A short-lived process: what is loaded by now (the CLI, the rules, LibCST) lives until it exits. Taken out
        # of the collector's reach, it is not walked by every collection (in the forked workers too), nor at exit,
        # nor copied into the workers by the collector's writes. And a port makes many objects (LibCST trees) but
        # few cycles: collecting the youngest generation every 700 allocations (Python's default) took a tenth of
        # the porting time; every 10,000 costs a few MiB at most (forked workers inherit both settings).
        gc.freeze()
        gc.set_threshold(GC_THRESHOLD, 50, 50)
    started = time.monotonic()
    result = _run_with_progress(paths, config, started)
    _warn_nothing_found(paths, result, changed_since)
    if _output.verbose:
        done = "scanned" if _output.verb == "scanning" else "ported"
        err.print(escape(f"{_count(len(result.files), 'file')} {done} in {time.monotonic() - started:.1f} s"))
    return _note_skipped(result)


def _run_with_progress(paths: list[Path], config: RunConfig, started: float) -> RunResult:
    """A progress bar on a terminal, a line every few seconds in a log, nothing with --quiet."""
    if _output.quiet:
        return run(paths, config)
    if not sys.stderr.isatty():
        return run(paths, config, _progress_lines(started))
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn(_output.verb), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=True
    ) as progress:
        task = progress.add_task("port", total=None)
        return run(paths, config, lambda done, total: progress.update(task, completed=done, total=total))


SKIPPED_SHOWN = 5  # names of skipped files on stderr, per kind; the reports list them all


def _note_run(result: RunResult) -> None:
    if _output.quiet:
        return
    for note in result.notes:
        err.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True)


def _note_skipped(result: RunResult) -> RunResult:
    """One stderr line per kind of skip (ignore rules, excludes): how many files were left out, and the first names.
    Never silent: a .gitignore that matches a package must be seen (but with --quiet); --verbose names them all."""
    shown = None if _output.verbose else SKIPPED_SHOWN
    for kind, label in (("gitignore", "ignored by git"), ("exclude", "excluded")):
        names = [s.path for s in result.skipped if s.kind == kind]
        if names and not _output.quiet:
            line = f"{_count(len(names), 'file')} skipped ({label}): {', '.join(names[:shown])}"
            if shown is not None and len(names) > shown:
                line += f' and {len(names) - SKIPPED_SHOWN} more (all in the JSON report\'s "skipped": --format json)'
            err.print(escape(line), soft_wrap=True)
    _note_run(result)
    return result


def _report_errors(result: RunResult) -> None:
    for file in result.errors:
        err.print(f"[red]error:[/red] {escape(f'{file.path}: {file.error}')}")


def _count(n: int, noun: str) -> str:
    """``1 file``, ``2 files``: the summary lines are read, and copied into tickets."""
    return f"{n} {noun if n == 1 else noun + 's'}"


def _findings_counts(rewrites: int, todos: int) -> str:
    return f"{_count(rewrites, 'rewrite')}, {_count(todos, 'TODO')}"


def _totals_line(result: RunResult, written: bool = False) -> str:
    """The summary line: files checked and to change (``written``: ported, after `apply` wrote them), the rewrites
    and TODOs, the notes and the files with errors."""
    # "compatible as it is" notes (the info kind) are neither rewrites nor TODOs
    kinds = Counter(f.kind for file in result.files for f in file.findings)
    rewrites = sum(1 for file in result.files for f in file.findings if f.kind != "info" and f.rewrites)
    todos = kinds.total() - kinds["info"] - rewrites
    changed = len(result.changed)
    checked = len(result.files) - len(result.created)  # (a file the port creates was not there to check)
    files = (
        f"{_count(changed, 'file')} ported ({checked} checked)"
        if written
        else f"{_count(checked, 'file')} checked, {changed} to change"
    )
    return (
        f"{files}: {_findings_counts(rewrites, todos)}"
        + (f", {_count(kinds['info'], 'note')} (nothing to do)" if kinds["info"] else "")
        + (f", {_count(len(result.errors), 'file')} with errors" if result.errors else "")
    )


@app.command()
def scan(
    paths: PathsArg,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    min_confidence: MinConfidenceOpt = None,
    jobs: JobsOpt = 0,
    exclude: ExcludeOpt = None,
    exit_zero: ExitZeroOpt = False,
    output_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="concise (a finding a line; the default in a pipe or a terminal under 100 columns), text (table; the "
            "default on a wide terminal), md (assessment), json, sarif, csv (change list) or github (annotations).",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report to this file instead of printing it.")
    ] = None,
    sarif: Annotated[
        Path | None,
        typer.Option(
            "--sarif",
            help="Also write the SARIF report to this file (one scan for two reports, e.g. --format github in CI).",
            show_default=False,
        ),
    ] = None,
    attention_backend: AttentionOpt = None,
    other_devices: OtherDevicesOpt = None,
    changed_since: ChangedSinceOpt = None,
    no_cache: NoCacheOpt = False,
    torch_npu: TorchNpuOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    color: ColorOpt = "auto",
) -> None:
    """Report what a port would change and where manual work is needed. Writes nothing (but --output)."""
    from ascend_port.reports import FORMATS

    _set_output(quiet, verbose, color, "scanning")
    if output_format is not None and output_format not in FORMATS:
        raise _fail(f"--format {escape(output_format)!r}: use one of {', '.join(FORMATS)}")
    flags = project_config.Flags(
        select, ignore, min_confidence, exclude, attention_backend, other_devices=other_devices, torch_npu=torch_npu
    )
    settings = _settings(paths, flags, cached_rules=not no_cache)
    result = _run(paths, _config(settings, jobs, no_cache), changed_since)
    if output_format is None:
        output_format = "concise" if output is not None else _default_format(result)
    _print_scan(result, output_format, output)
    if sarif is not None:
        _write_report(result, "sarif", sarif)
    # information (NPU407: SDPA runs natively) is nothing to do: it never fails a scan
    findings = any(f.kind != "info" for file in result.files for f in file.findings)
    raise typer.Exit(EXIT_ERROR if result.errors else EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN)


def _print_scan(result: RunResult, output_format: str, output: Path | None) -> None:
    """The report, the errors and the totals: the console formats on stdout with their totals after them, the
    others (or a report written to a file) with their totals on stderr, out of the report."""
    if output_format in ("text", "concise") and output is None:
        if output_format == "text":
            from ascend_port.reports.text import print_text

            print_text(result, out)
        else:
            _print_concise(result)
        _report_errors(result)
        if not _output.quiet:
            out.print(_totals_line(result), soft_wrap=True)
        return
    _write_report(result, output_format, output)
    _report_errors(result)
    if not _output.quiet:
        err.print(_totals_line(result))


def _write_report(result: RunResult, output_format: str, output: Path | None) -> None:
    """Print the report, or write it to ``output``."""
    if output_format == "text":
        import io

        from ascend_port.reports.text import print_text

        buffer = io.StringIO()
        print_text(result, Console(file=buffer, width=160, highlight=False))
        text = buffer.getvalue()
    elif output_format == "concise":
        from ascend_port.reports.text import concise_lines

        text = "".join(concise_lines(result))
    else:
        from ascend_port.reports import render

        text = render(result, output_format)
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        output.write_text(text, "utf-8", newline="")
    except OSError as error:
        raise _fail(f"cannot write {escape(str(output))}: {escape(error.strerror or str(error))}") from None


@app.command()
def apply(
    paths: PathsArg,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the diff; write nothing.")] = False,
    no_git: Annotated[bool, typer.Option("--no-git", help="Write the port in place, without git.")] = False,
    interactive: Annotated[
        bool, typer.Option("--interactive", "-i", help="Review the port hunk by hunk (git add -p keys) before writing.")
    ] = False,
    branch: Annotated[
        str | None, typer.Option("--branch", help=f"Branch to create for the port (default {DEFAULT_BRANCH}).")
    ] = None,
    force_branch: Annotated[bool, typer.Option("--force-branch", help="Replace the branch if it exists.")] = False,
    no_commit: Annotated[
        bool, typer.Option("--no-commit", help="Stage the port on the branch; do not commit.")
    ] = False,
    allow_dirty: Annotated[
        bool,
        typer.Option("--allow-dirty", help="Run despite uncommitted changes (files with such changes are left out)."),
    ] = False,
    report_dir: Annotated[
        Path | None,
        typer.Option("--report-dir", help="Folder for per-file diffs and the summary (default: .ascend-port/)."),
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Write nothing; print a summary; exit 1 while the port would change files.")
    ] = False,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    min_confidence: MinConfidenceOpt = None,
    jobs: JobsOpt = 0,
    exclude: ExcludeOpt = None,
    exit_zero: ExitZeroOpt = False,
    attention_backend: AttentionOpt = None,
    other_devices: OtherDevicesOpt = None,
    changed_since: ChangedSinceOpt = None,
    no_cache: NoCacheOpt = False,
    torch_npu: TorchNpuOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    color: ColorOpt = "auto",
) -> None:
    """Port the files. In a git repository (the default): commit the port on a new branch, one commit per domain.
    --dry-run prints the diff; --no-git writes it in place; --check only says whether anything is left to port."""
    _set_output(quiet, verbose, color, "porting")
    _check_apply_flags(
        dry_run,
        no_git,
        check,
        interactive,
        {
            "--branch": branch is not None,
            "--force-branch": force_branch,
            "--no-commit": no_commit,
            "--allow-dirty": allow_dirty,
            "--report-dir": report_dir is not None,
        },
    )
    flags = project_config.Flags(
        select, ignore, min_confidence, exclude, attention_backend, branch, other_devices, torch_npu
    )
    settings = _settings(paths, flags, cached_rules=not no_cache)
    config = _config(settings, jobs, no_cache)
    if not dry_run and not no_git and not check:
        raise typer.Exit(
            _apply_with_git(
                paths,
                dataclasses.replace(config, share_helpers=False),  # the workflow shares them after its review
                changed_since,
                settings.branch or DEFAULT_BRANCH,
                force_branch,
                not no_commit,
                allow_dirty,
                report_dir,
                interactive,
            )
        )
    # After a review, the attention helpers go to their shared module only from the accepted files (never an
    # import of a module whose hunk was refused): the step runs then, on what was accepted.
    result = _run(paths, dataclasses.replace(config, share_helpers=not interactive), changed_since)
    if check:
        _check(result, dry_run, exit_zero)
    if dry_run:
        _print_diffs(result)
    else:
        _write_in_place(result, interactive, config)
    _report_errors(result)
    _print_apply_summary(result, dry_run)
    if result.errors:
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(EXIT_FINDINGS if dry_run and result.changed and not exit_zero else EXIT_CLEAN)


def _print_apply_summary(result: RunResult, dry_run: bool) -> None:
    """After `apply --dry-run` the totals; after writing in place every file written (as black does), then how many.
    The files that could not be written are errors, reported before."""
    if _output.quiet:
        return
    if dry_run:
        err.print(_totals_line(result) + " (dry run: nothing written)")
        return
    for file in result.changed:
        kinds = Counter(f.kind for f in file.findings)
        err.print(escape(f"ported {file.path} ({_findings_counts(kinds['rewrite'], kinds['todo'])})"))
    err.print(_totals_line(result, written=True))


def _check_apply_flags(dry_run: bool, no_git: bool, check: bool, interactive: bool, git_flags: dict[str, bool]) -> None:
    """Refuse contradictory `apply` flags before any work is done. ``git_flags``: each option of the git workflow,
    in the order the errors name them, with whether it was given."""
    git_only = [flag for flag, given in git_flags.items() if given]
    if (dry_run or no_git or check) and git_only:
        raise _fail(
            f"{git_only[0]} is an option of the git workflow: it cannot be used with --dry-run, --no-git or --check"
        )
    if check and (no_git or interactive):
        raise _fail(f"--check writes nothing: it cannot be combined with {'--no-git' if no_git else '--interactive'}")
    if dry_run and interactive:
        raise _fail("--interactive cannot be combined with --dry-run")


def _apply_with_git(
    paths: list[Path],
    config: RunConfig,
    changed_since: str | None,
    branch: str,
    force_branch: bool,
    commit: bool,
    allow_dirty: bool,
    report_dir: Path | None,
    interactive: bool,
) -> int:
    """The default `apply`: port on a new branch of the repository. Returns the exit code (a workflow error's own
    code after printing it)."""
    from ascend_port.git.workflow import GitOptions, WorkflowError, apply_to_repository

    options = GitOptions(branch, force_branch, commit, allow_dirty, report_dir, interactive)
    try:
        return apply_to_repository(paths, config, options, lambda: _run(paths, config, changed_since), out, err)
    except WorkflowError as error:
        err.print(f"[red]error:[/red] {escape(str(error))}")
        return error.exit_code


def _print_diffs(result: RunResult) -> None:
    """The unified diff of every file the port changes, as bytes: the files' own encodings and line endings. A file
    outside the working directory is shown relative to its repository's root (or else to the folder given), never
    as ``a//abs/path``, which ``git apply`` rejects; a note says where to apply it."""
    bases: set[str] = set()
    for file in result.changed:
        diff = file.diff
        if os.path.isabs(file.path):
            base = _diff_base(Path(file.path), result.roots)
            diff = _rebase_diff(diff, file.path, Path(file.path).relative_to(base).as_posix())
            bases.add(str(base))
        sys.stdout.buffer.write(diff)
    sys.stdout.buffer.flush()
    for shown in sorted(bases):
        err.print(
            f"note: paths in the diff are relative to {escape(shown)}: apply it there (git -C {escape(shown)} apply)",
            soft_wrap=True,
            highlight=False,
        )


def _diff_base(path: Path, roots: list[Path]) -> Path:
    """The root of the git work tree holding ``path``, else the given folder it is under (else its folder)."""
    for folder in path.parents:
        if (folder / ".git").exists():
            return folder
    return next((root for root in roots if path.is_relative_to(root)), path.parent)


def _rebase_diff(diff: bytes, old: str, new: str) -> bytes:
    """``diff`` with its ``---``/``+++`` paths ``old`` replaced by ``new`` (only in those two header lines)."""
    header, separator, body = diff.partition(b"\n@@")
    old_b, new_b = old.encode("utf-8", "surrogateescape"), new.encode("utf-8", "surrogateescape")
    header = header.replace(b"--- a/" + old_b, b"--- a/" + new_b, 1).replace(b"+++ b/" + old_b, b"+++ b/" + new_b, 1)
    return header + separator + body


def _write_in_place(result: RunResult, interactive: bool, config: RunConfig) -> None:
    """`apply --no-git`: write the changed files (run/inplace.py), after the hunk review with --interactive."""
    from ascend_port.run.engine import share_helpers
    from ascend_port.run.inplace import write_in_place

    if interactive:
        from ascend_port.git.review import review_in_place

        try:
            review_in_place(result, out)
        except KeyboardInterrupt:
            err.print("interrupted: nothing was written")
            raise typer.Exit(130) from None
        if config.share_helpers:
            share_helpers(result, config)
            _note_run(result)
    writing = write_in_place(result)
    if writing.interrupted:
        _report_interrupted_writes(writing.written, writing.left)
        raise typer.Exit(130)


def _report_interrupted_writes(written: list[str], left: list[str]) -> None:
    err.print(
        f"interrupted: {_count(len(written), 'file')} ported, "
        f"{len(left)} left as {'they were' if len(left) != 1 else 'it was'} "
        "(run the same command again to port them; ported files are not changed twice)",
        soft_wrap=True,
        highlight=False,
    )
    for path in written:
        err.print(f"  ported: {escape(path)}", soft_wrap=True, highlight=False)


def _check(result: RunResult, show_diff: bool, exit_zero: bool) -> None:
    """``apply --check``: the diff only with --dry-run, then one line per file left to port and the totals."""
    if show_diff:
        _print_diffs(result)
    for file in result.changed if not _output.quiet else ():
        kinds = Counter(f.rewrites for f in file.findings if f.applied)
        err.print(f"would port {escape(file.path)} ({_findings_counts(kinds[True], kinds[False])})", soft_wrap=True)
    _report_errors(result)
    verdict = "not fully ported: run `ascend-port apply`" if result.changed else "fully ported"
    if not _output.quiet:
        err.print(f"{_totals_line(result)}; {verdict}", soft_wrap=True)
    if result.errors:
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(EXIT_FINDINGS if result.changed and not exit_zero else EXIT_CLEAN)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def emulate(
    ctx: typer.Context,
    devices: Annotated[int, typer.Option("--devices", help="Number of emulated npu devices (npu:0..N-1).")] = 1,
    report: Annotated[
        Path | None, typer.Option("--report", help="Write the torch_npu calls and missing APIs as JSON to this file.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Run even where a real torch_npu is installed.")] = False,
    torch_npu: Annotated[
        str | None,
        typer.Option("--torch-npu", help="The torch_npu release whose API the stand-in has (default: the newest)."),
    ] = None,
) -> None:
    """Run a Python command (python, -m, pytest, torchrun) with an emulated npu device on CPU and a stand-in
    torch_npu: `ascend-port emulate [--devices N] -- python train.py`. Exits with the command's exit code."""
    from ascend_port.emulate.runner import run_emulated

    raise typer.Exit(run_emulated(list(ctx.args), devices, report, force, torch_npu))


@app.command()
def verify(
    path: Annotated[
        Path | None, typer.Argument(help="The ported project (default: the current folder).", show_default=False)
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds each command may run (then killed).")] = 120.0,
    torch_npu: Annotated[
        str | None,
        typer.Option(
            "--torch-npu",
            metavar="VERSION",
            help="The torch_npu release to emulate (default: the port's target, from the configuration or the torch "
            "pin, else the newest).",
        ),
    ] = None,
    devices: Annotated[int, typer.Option("--devices", help="Number of emulated npu devices.")] = 1,
    compare: Annotated[
        bool, typer.Option("--compare", help="Also run the original on plain CPU with the same seed; compare losses.")
    ] = False,
    original: Annotated[
        Path | None, typer.Option("--original", help="--compare: the project before the port (a folder).")
    ] = None,
    base: Annotated[
        str | None,
        typer.Option("--base", metavar="REF", help="--compare: the git ref before the port (default: found)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="--compare: the seed of both runs.")] = 0,
    losses: Annotated[int, typer.Option("--losses", help="Losses recorded and compared per command.")] = 20,
    reference: Annotated[
        Path | None,
        typer.Option("--reference", help="--compare: where the reference JSON goes (default: .ascend-port/ in PATH)."),
    ] = None,
    kit: Annotated[
        Path | None, typer.Option("--kit", metavar="DIR", help="Write a kit to run the commands on an Ascend host.")
    ] = None,
    output_format: Annotated[str, typer.Option("--format", help="Report format: text, md or json.")] = "text",
    output: Annotated[Path | None, typer.Option("--output", help="Write the report to this file.")] = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    color: ColorOpt = "auto",
) -> None:
    """Run the ported project's commands under the emulator and say what starts and what stops the rest: the
    commands of `[tool.ascend-port.verify]`, else the import of the ported modules, `--help` of its scripts and
    its pytest suite. Exits 1 while a command fails to start."""
    from ascend_port.verify.main import VerifyError, VerifyOptions, run_verify

    _set_output(quiet, verbose, color, "verifying")
    options = VerifyOptions(
        path or Path("."),
        timeout,
        torch_npu,
        devices,
        compare,
        original,
        base,
        seed,
        losses,
        reference,
        kit,
        output_format,
        output,
        verbose,
    )
    try:
        code = run_verify(options, None if quiet else lambda line: err.print(escape(line), soft_wrap=True))
    except VerifyError as error:
        raise _fail(escape(str(error))) from None
    raise typer.Exit(code)


@app.command("rules")
def list_rules() -> None:
    """List every rule: ID, name, confidence and summary."""
    from rich.table import Table

    table = Table(show_edge=False, header_style="bold")
    for column in ("rule", "name", "domain", "confidence", "summary"):
        table.add_column(column, overflow="fold")
    for r in all_rules():
        table.add_row(r.id, r.name, r.domain, r.confidence.label, r.summary)
    out.print(table)


@app.command()
def explain(rule_id: Annotated[str, typer.Argument(help="A rule ID such as NPU101.")]) -> None:
    """Print one rule's documentation with its before/after example."""
    try:
        r = get_rule(rule_id)
    except KeyError as error:
        raise _fail(error.args[0]) from None
    from rich.markdown import Markdown

    where = f"\n\nCode: `{r.path}`." if r.path else ""
    out.print(Markdown(f"# {r.id} {r.name} ({r.confidence.label})\n\n{r.summary}\n\n" + _doc_markdown(r.doc) + where))


@app.command()
def todos(
    paths: PathsArg,
    check: Annotated[bool, typer.Option("--check", help="Exit 1 while any TODO remains (for CI).")] = False,
    exclude: ExcludeOpt = None,
) -> None:
    """List the ascend-port TODO comments left in the files (file:line, rule, confidence, text) by rule."""
    from ascend_port.run.todos import find_todos, render

    missing = [p for p in paths if not p.exists()]
    if missing:
        raise _fail(f"no such file or directory: {missing[0]}")
    report = find_todos(paths, tuple(exclude or ()))
    for line in render(report):
        typer.echo(line)  # plain text: the messages hold brackets, and long lines must not be wrapped
    for path, reason in report.errors:
        err.print(f"[red]error:[/red] {escape(path)}: {escape(reason)}")
    raise typer.Exit(EXIT_ERROR if report.errors else EXIT_FINDINGS if check and report.todos else EXIT_CLEAN)


def _doc_markdown(doc: str) -> str:
    """Rule docs keep ``Before:``/``After:`` examples as indented blocks; show them as code."""
    lines = []
    for line in doc.splitlines():
        if line.strip() in ("Before:", "After:"):
            lines.append(f"\n**{line.strip()}**\n")
        else:
            lines.append(line)
    return "\n".join(lines)


@app.command("config")
def show_config(
    path: Annotated[
        Path | None,
        typer.Argument(help="Where to look for pyproject.toml (default: the current folder).", show_default=False),
    ] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    min_confidence: MinConfidenceOpt = None,
    exclude: ExcludeOpt = None,
    attention_backend: AttentionOpt = None,
    other_devices: OtherDevicesOpt = None,
    branch: Annotated[str | None, typer.Option("--branch", help="Branch `apply` creates.")] = None,
    torch_npu: TorchNpuOpt = None,
) -> None:
    """Print the effective configuration: [tool.ascend-port] of the nearest pyproject.toml, with the defaults and
    the flags given here (flags override the file), each value with where it comes from."""
    target = path or Path(".")
    if not target.exists():
        raise _fail(f"no such file or directory: {escape(str(target))}")
    flags = project_config.Flags(
        select, ignore, min_confidence, exclude, attention_backend, branch, other_devices, torch_npu
    )
    settings = _settings([target], flags)
    typer.echo(project_config.render(settings), nl=False)


@app.command("check-api")
def check_api(
    paths: PathsArg,
    torch_npu: TorchNpuOpt = None,
    exclude: ExcludeOpt = None,
    exit_zero: ExitZeroOpt = False,
) -> None:
    """Check that every torch_npu / torch.npu name of the Python files exists in the target torch-npu release
    (--torch-npu, else the configuration's or the project's torch pin's). Exits 1 while a name is missing."""
    from ascend_port.run.api_check import check_api as run_check
    from ascend_port.run.api_check import render

    missing = [p for p in paths if not p.exists()]
    if missing:
        raise _fail(f"no such file or directory: {missing[0]}")
    settings = _settings(paths, project_config.Flags(exclude=exclude, torch_npu=torch_npu))
    report = run_check(paths, settings.target, settings.exclude_globs)
    origin = settings.origins.get(project_config.TARGET_KEY, project_config.DEFAULT)
    err.print(escape(f"target: torch_npu {settings.target} ({project_config.origin_name(settings, origin)})"))
    for line in render(report):
        typer.echo(line)
    for path, reason in report.errors:
        err.print(f"[red]error:[/red] {escape(path)}: {escape(reason)}")
    found = EXIT_FINDINGS if report.missing and not exit_zero else EXIT_CLEAN
    raise typer.Exit(EXIT_ERROR if report.errors else found)


def _version_callback(value: bool) -> None:
    if value:
        out.print(f"ascend-port {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_version_callback, is_eager=True, help="Show the version and exit."),
    ] = False,
) -> None:
    _set_output(quiet=False, verbose=False, color="auto", verb="porting")  # (each in-process call starts afresh)


_standalone = False  # True in the `ascend-port` process itself (main), not when the app is called in-process
GC_THRESHOLD = 10_000  # allocations between two collections of the youngest generation (Python's default: 700)


def main() -> None:
    global _standalone
    _standalone = True
    app()
