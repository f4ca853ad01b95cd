"""The console formats: ``--format text`` (the findings table and the totals per domain, for a wide terminal) and
``--format concise`` (one finding per line, ``path:line: NPU106 [high] message``, for pipes, CI logs and narrow
terminals: nothing is ever wrapped, and editors and problem matchers jump to ``path:line``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ascend_port.core.catalogue import DOMAIN_TABLE
from ascend_port.core.findings import Finding
from ascend_port.reports.lines import scanned_line
from ascend_port.run.engine import RunResult

COLOURS = {"high": "green", "medium": "yellow", "low": "red", "info": "cyan"}
# ANSI codes of the concise format (written as plain text: rich's renderer costs seconds on 10,000 findings)
_ANSI = {"green": "32", "yellow": "33", "red": "31", "cyan": "36", "bold": "1"}


def label(finding: Finding) -> str:
    """What the confidence column says: the finding's confidence, as in every format."""
    return finding.confidence.label


def shown_message(finding: Finding) -> str:
    """The message, said to be information where it is (NPU407: code that runs on the NPU as it is), not work."""
    return f"info: {finding.message}" if finding.kind == "info" else finding.message


def _colour(finding: Finding) -> str:
    return COLOURS["info" if finding.kind == "info" else finding.confidence.label]


def _rows(result: RunResult) -> list[tuple[str, Finding]]:
    # (lines of the files as scanned, as in every format: reports/lines.py places NPU100's added import)
    return sorted(
        (
            (file.path, replace(f, line=scanned_line(file, f)) if f.rule.line_in_new_text else f)
            for file in result.files
            for f in file.findings
        ),
        key=lambda row: (row[0], row[1].line, row[1].rule.id),
    )


def concise_lines(result: RunResult, colour: bool = False) -> Iterator[str]:
    """One line per finding, sorted by file and line, each ending with a newline."""

    def paint(text: str, style: str) -> str:
        return f"\x1b[{_ANSI[style]}m{text}\x1b[0m" if colour else text

    for path, f in _rows(result):
        where, rule, tag = paint(f"{path}:{f.line}:", "bold"), paint(f.rule.id, "bold"), f"[{label(f)}]"
        yield f"{where} {rule} {paint(tag, _colour(f))} {shown_message(f)}\n"


def print_text(result: RunResult, console: Console) -> None:
    rows = _rows(result)
    if not rows:
        return
    table = Table(show_edge=False, header_style="bold")
    # file:line is never folded (a location cut in two is neither read nor clicked); the message takes the rest
    table.add_column("location", no_wrap=True)
    table.add_column("rule", no_wrap=True)
    table.add_column("confidence", no_wrap=True)
    table.add_column("message", overflow="fold", ratio=1)
    for path, f in rows:
        colour = _colour(f)
        table.add_row(
            escape(f"{path}:{f.line}"), f.rule.id, f"[{colour}]{label(f)}[/{colour}]", escape(shown_message(f))
        )
    console.print(table)
    totals = Table(title="per domain", show_edge=False, header_style="bold")
    for column in ("domain", "rewrites", "TODOs"):
        totals.add_column(column, justify="right" if column != "domain" else "left")
    # information (SDPA runs natively) is neither a rewrite nor a TODO
    by_domain = Counter((f.rule.id[:4], f.rewrites) for _, f in rows if f.kind != "info")
    for domain in DOMAIN_TABLE:  # (named as in every report and in the commit messages)
        if by_domain[(domain.prefix, True)] or by_domain[(domain.prefix, False)]:
            totals.add_row(domain.title, str(by_domain[(domain.prefix, True)]), str(by_domain[(domain.prefix, False)]))
    if totals.row_count:
        console.print(totals)
    _print_performance([f for _, f in rows], console)


def _print_performance(findings: list[Finding], console: Console) -> None:
    """What the port made faster and what it left, with the expected effect and its source (reports/performance)."""
    from ascend_port.reports.performance import performance, source_text

    section = performance(findings)
    if not section:
        return
    table = Table(title="performance", show_edge=False, header_style="bold")
    table.add_column("rule", no_wrap=True)
    table.add_column("count", justify="right")
    table.add_column("status", no_wrap=True)
    table.add_column("expected effect (source)", overflow="fold", ratio=1)
    for done in section.done:
        table.add_row(f"{done.rule.id} {done.rule.name}", str(done.count), "done", "")
    for left in section.left:
        figure = left.figure
        text = f"{figure.effect}; {figure.figure} ({source_text(figure)})"
        table.add_row(f"{left.rule.id} {left.rule.name}", str(left.count), "left", escape(text))
    console.print(table)
