"""The ``ascend-port`` command line. Exit codes follow ruff and black: 0 clean, 1 findings or pending changes,
2 usage or tool error (including files that could not be read or parsed)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ascend_port import __version__
from ascend_port.engine import RunConfig, RunResult, run
from ascend_port.rules import DOMAINS, Confidence, Selection, all_rules, get_rule, parse_patterns
from ascend_port.sources import write_atomic

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
SelectOpt = Annotated[Optional[list[str]], typer.Option(
    "--select", help="Rule IDs or prefixes to run (e.g. NPU1,NPU205; default ALL).")]
IgnoreOpt = Annotated[Optional[list[str]], typer.Option("--ignore", help="Rule IDs or prefixes to skip.")]
MinConfidenceOpt = Annotated[str, typer.Option(
    "--min-confidence", help="Run only rules at or above this confidence: high, medium or low.")]
JobsOpt = Annotated[int, typer.Option("--jobs", "-j", help="Worker processes (0: all cores).")]
ExcludeOpt = Annotated[Optional[list[str]], typer.Option("--exclude", help="Glob of paths to skip (repeatable).")]
ExitZeroOpt = Annotated[bool, typer.Option(
    "--exit-zero", help="Exit 0 even when there are findings or pending changes (errors still exit 2).")]


def _fail(message: str) -> typer.Exit:
    err.print(f"[red]error:[/red] {message}")
    return typer.Exit(EXIT_ERROR)


def _config(select, ignore, min_confidence: str, jobs: int, exclude) -> RunConfig:
    try:
        selection = Selection(
            select=parse_patterns(select) or ("ALL",),
            ignore=parse_patterns(ignore),
            min_confidence=Confidence.parse(min_confidence),
        )
        selection.validate()
    except ValueError as error:
        raise _fail(str(error)) from None
    if jobs < 0:
        raise _fail("--jobs must be 0 (all cores) or a positive number")
    return RunConfig(selection=selection, jobs=jobs, exclude=tuple(exclude or ()))


def _run(paths: list[Path], config: RunConfig) -> RunResult:
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise _fail(f"no such file or directory: {missing[0]}")
    if not sys.stderr.isatty():
        return run(paths, config)
    with Progress(TextColumn("porting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as progress:
        task = progress.add_task("port", total=None)
        return run(paths, config, lambda done, total: progress.update(task, completed=done, total=total))


def _report_errors(result: RunResult) -> None:
    for file in result.errors:
        err.print(f"[red]error:[/red] {file.path}: {file.error}")


def _totals_line(result: RunResult) -> str:
    findings = [f for file in result.files for f in file.findings]
    rewrites = sum(1 for f in findings if f.rule.rewrites)
    todos = len(findings) - rewrites
    changed = len(result.changed)
    return (f"{len(result.files)} files checked, {changed} to change: {rewrites} rewrites, {todos} TODOs"
            + (f", {len(result.errors)} files with errors" if result.errors else ""))


@app.command()
def scan(paths: PathsArg, select: SelectOpt = None, ignore: IgnoreOpt = None, min_confidence: MinConfidenceOpt = "low",
         jobs: JobsOpt = 0, exclude: ExcludeOpt = None, exit_zero: ExitZeroOpt = False) -> None:
    """Report what a port would change and where manual work is needed. Writes nothing."""
    result = _run(paths, _config(select, ignore, min_confidence, jobs, exclude))
    rows = sorted(((file.path, f) for file in result.files for f in file.findings),
                  key=lambda row: (row[0], row[1].line, row[1].rule.id))
    if rows:
        table = Table(show_edge=False, header_style="bold")
        for column in ("location", "rule", "confidence", "message"):
            table.add_column(column, overflow="fold")
        for path, f in rows:
            colour = {"high": "green", "medium": "yellow", "low": "red"}[f.confidence.label]
            table.add_row(f"{path}:{f.line}", f.rule.id, f"[{colour}]{f.confidence.label}[/{colour}]", f.message)
        out.print(table)
        totals = Table(title="per domain", show_edge=False, header_style="bold")
        for column in ("domain", "rewrites", "TODOs"):
            totals.add_column(column, justify="right" if column != "domain" else "left")
        by_domain = Counter((f.rule.domain, f.rule.rewrites) for _, f in rows)
        for domain in DOMAINS.values():
            if by_domain[(domain, True)] or by_domain[(domain, False)]:
                totals.add_row(domain, str(by_domain[(domain, True)]), str(by_domain[(domain, False)]))
        out.print(totals)
    _report_errors(result)
    out.print(_totals_line(result))
    raise typer.Exit(EXIT_ERROR if result.errors else EXIT_FINDINGS if rows and not exit_zero else EXIT_CLEAN)


@app.command()
def apply(paths: PathsArg,
          dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the diff; write nothing.")] = False,
          no_git: Annotated[bool, typer.Option("--no-git", help="Write the port in place, without git.")] = False,
          select: SelectOpt = None, ignore: IgnoreOpt = None, min_confidence: MinConfidenceOpt = "low",
          jobs: JobsOpt = 0, exclude: ExcludeOpt = None, exit_zero: ExitZeroOpt = False) -> None:
    """Port the files: print the diff (--dry-run) or write it in place (--no-git)."""
    if not dry_run and not no_git:
        raise _fail("the git branch workflow is not available yet: use --dry-run to see the diff, "
                    "or --no-git to write the port in place")
    result = _run(paths, _config(select, ignore, min_confidence, jobs, exclude))
    if dry_run:
        for file in result.changed:
            sys.stdout.buffer.write(file.diff)
        sys.stdout.buffer.flush()
    else:
        for file in result.changed:
            try:
                write_atomic(Path(file.path), file.new_bytes)
            except OSError as error:
                file.error = f"cannot write: {error.strerror or error}"
                file.new_bytes = None
    _report_errors(result)
    err.print(_totals_line(result) + (" (dry run: nothing written)" if dry_run else ""))
    if result.errors:
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(EXIT_FINDINGS if dry_run and result.changed and not exit_zero else EXIT_CLEAN)


@app.command("rules")
def list_rules() -> None:
    """List every rule: ID, name, confidence and summary."""
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
    out.print(Markdown(f"# {r.id} {r.name} ({r.confidence.label})\n\n{r.summary}\n\n" + _doc_markdown(r.doc)))


def _doc_markdown(doc: str) -> str:
    """Rule docs keep ``Before:``/``After:`` examples as indented blocks; show them as code."""
    lines = []
    for line in doc.splitlines():
        if line.strip() in ("Before:", "After:"):
            lines.append(f"\n**{line.strip()}**\n")
        else:
            lines.append(line)
    return "\n".join(lines)


def _version_callback(value: bool) -> None:
    if value:
        out.print(f"ascend-port {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: Annotated[bool, typer.Option("--version", callback=_version_callback, is_eager=True,
                                                help="Show the version and exit.")] = False) -> None:
    pass


def main() -> None:
    app()
