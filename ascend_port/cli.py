"""The ``ascend-port`` command line. Exit codes follow ruff and black: 0 clean, 1 findings or pending changes,
2 usage or tool error (including files that could not be read or parsed)."""

from __future__ import annotations

import dataclasses
import gc
import sys
from collections import Counter
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
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console(highlight=False)
err = Console(stderr=True, highlight=False)

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
ExcludeOpt = Annotated[list[str] | None, typer.Option("--exclude", help="Glob of paths to skip (repeatable).")]
ExitZeroOpt = Annotated[
    bool,
    typer.Option("--exit-zero", help="Exit 0 even when there are findings or pending changes (errors still exit 2)."),
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


def _settings(
    paths: list[Path],
    select=None,
    ignore=None,
    min_confidence=None,
    exclude=None,
    attention_backend=None,
    branch=None,
    cached_rules: bool = False,
    other_devices=None,
    torch_npu=None,
) -> project_config.Settings:
    """``[tool.ascend-port]`` of the nearest pyproject.toml above ``paths[0]``, overridden by the given flags.
    ``cached_rules``: the rule catalogue may come from the result cache (see cache.use_stored_rules)."""
    flags = {
        "select": select,
        "ignore": ignore,
        "min-confidence": min_confidence,
        "exclude": exclude,
        "attention-backend": attention_backend,
        "branch": branch,
        "other-devices": other_devices,
        "torch-npu": torch_npu,
    }
    if cached_rules:
        from ascend_port.run.cache import use_stored_rules

        use_stored_rules()
    try:
        return project_config.resolve(paths, flags)
    except project_config.ConfigError as error:
        raise _fail(escape(str(error))) from None


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
    if not sys.stderr.isatty():
        return _note_skipped(run(paths, config))
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("porting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=True
    ) as progress:
        task = progress.add_task("port", total=None)
        result = run(paths, config, lambda done, total: progress.update(task, completed=done, total=total))
    return _note_skipped(result)


SKIPPED_SHOWN = 5  # names of skipped files on stderr, per kind; the reports list them all


def _note_run(result: RunResult) -> None:
    for note in result.notes:
        err.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True)


def _note_skipped(result: RunResult) -> RunResult:
    """One stderr line per kind of skip (ignore rules, excludes): how many files were left out, and the first names.
    Never silent: a .gitignore that matches a package must be seen."""
    for kind, label in (("gitignore", "ignored by git"), ("exclude", "excluded")):
        names = [s.path for s in result.skipped if s.kind == kind]
        if names:
            line = f"{len(names)} file{'s' if len(names) > 1 else ''} skipped ({label}): {', '.join(names[:SKIPPED_SHOWN])}"
            if len(names) > SKIPPED_SHOWN:
                line += f' and {len(names) - SKIPPED_SHOWN} more (all in the JSON report\'s "skipped": --format json)'
            err.print(escape(line), soft_wrap=True)
    _note_run(result)
    return result


def _report_errors(result: RunResult) -> None:
    for file in result.errors:
        err.print(f"[red]error:[/red] {file.path}: {file.error}")


def _totals_line(result: RunResult) -> str:
    # "compatible as it is" notes are neither rewrites nor TODOs
    findings = [f for file in result.files for f in file.findings if not f.rule.informational]
    rewrites = sum(1 for f in findings if f.rule.rewrites)
    todos = len(findings) - rewrites
    changed = len(result.changed)
    checked = len(result.files) - len(result.created)  # (a file the port creates was not there to check)
    return f"{checked} files checked, {changed} to change: {rewrites} rewrites, {todos} TODOs" + (
        f", {len(result.errors)} files with errors" if result.errors else ""
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
        str,
        typer.Option(
            "--format", help="text (table), md (assessment), json, sarif, csv (change list) or github (annotations)."
        ),
    ] = "text",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report to this file instead of printing it.")
    ] = None,
    attention_backend: AttentionOpt = None,
    other_devices: OtherDevicesOpt = None,
    changed_since: ChangedSinceOpt = None,
    no_cache: NoCacheOpt = False,
    torch_npu: TorchNpuOpt = None,
) -> None:
    """Report what a port would change and where manual work is needed. Writes nothing (but --output)."""
    from ascend_port.reports import FORMATS

    if output_format not in FORMATS:
        raise _fail(f"--format {escape(output_format)!r}: use one of {', '.join(FORMATS)}")
    settings = _settings(
        paths,
        select,
        ignore,
        min_confidence,
        exclude,
        attention_backend,
        cached_rules=not no_cache,
        other_devices=other_devices,
        torch_npu=torch_npu,
    )
    result = _run(paths, _config(settings, jobs, no_cache), changed_since)
    if output_format == "text" and output is None:
        from ascend_port.reports.text import print_text

        print_text(result, out)
        _report_errors(result)
        out.print(_totals_line(result))
    else:
        _write_report(result, output_format, output)
        _report_errors(result)
        err.print(_totals_line(result))
    findings = any(file.findings for file in result.files)
    raise typer.Exit(EXIT_ERROR if result.errors else EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN)


def _write_report(result: RunResult, output_format: str, output: Path | None) -> None:
    """Print the report, or write it to ``output``."""
    if output_format == "text":
        import io

        from ascend_port.reports.text import print_text

        buffer = io.StringIO()
        print_text(result, Console(file=buffer, width=160, highlight=False))
        text = buffer.getvalue()
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
) -> None:
    """Port the files. In a git repository (the default): commit the port on a new branch, one commit per domain.
    --dry-run prints the diff; --no-git writes it in place; --check only says whether anything is left to port."""
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
    settings = _settings(
        paths,
        select,
        ignore,
        min_confidence,
        exclude,
        attention_backend,
        branch,
        cached_rules=not no_cache,
        other_devices=other_devices,
        torch_npu=torch_npu,
    )
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
    err.print(_totals_line(result) + (" (dry run: nothing written)" if dry_run else ""))
    if result.errors:
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(EXIT_FINDINGS if dry_run and result.changed and not exit_zero else EXIT_CLEAN)


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
    """The unified diff of every file the port changes, as bytes: the files' own encodings and line endings."""
    for file in result.changed:
        sys.stdout.buffer.write(file.diff)
    sys.stdout.buffer.flush()


def _write_in_place(result: RunResult, interactive: bool, config: RunConfig) -> None:
    """`apply --no-git`: write the changed files (after the hunk review with --interactive). A file that cannot be
    written becomes an error of the result, reported with the others, and keeps its old content. A file the port
    creates (the shared attention helpers) is never written over an existing one."""
    from ascend_port.core.sources import write_atomic
    from ascend_port.run.engine import share_helpers

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
    for file in result.changed:
        try:
            if file.path in result.created:
                with open(file.path, "xb") as handle:  # (exclusive: share_helpers saw no such file)
                    handle.write(file.new_bytes or b"")
                continue
            write_atomic(Path(file.path), file.new_bytes)
        except OSError as error:
            file.error = f"cannot write: {error.strerror or error}"
            file.new_bytes = None


def _check(result: RunResult, show_diff: bool, exit_zero: bool) -> None:
    """``apply --check``: the diff only with --dry-run, then one line per file left to port and the totals."""
    if show_diff:
        _print_diffs(result)
    for file in result.changed:
        kinds = Counter(f.rule.rewrites for f in file.findings if f.applied)
        err.print(f"would port {escape(file.path)} ({kinds[True]} rewrites, {kinds[False]} TODOs)", soft_wrap=True)
    _report_errors(result)
    verdict = "not fully ported: run `ascend-port apply`" if result.changed else "fully ported"
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
    settings = _settings(
        [target],
        select,
        ignore,
        min_confidence,
        exclude,
        attention_backend,
        branch,
        other_devices=other_devices,
        torch_npu=torch_npu,
    )
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
    settings = _settings(paths, exclude=exclude, torch_npu=torch_npu)
    report = run_check(paths, settings.target, settings.exclude)
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
        bool, typer.Option("--version", callback=_version_callback, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    pass


_standalone = False  # True in the `ascend-port` process itself (main), not when the app is called in-process
GC_THRESHOLD = 10_000  # allocations between two collections of the youngest generation (Python's default: 700)


def main() -> None:
    global _standalone
    _standalone = True
    app()
