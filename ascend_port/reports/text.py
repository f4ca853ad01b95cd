"""``--format text`` (the default): the findings table and the totals per domain, for a terminal."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ascend_port.core.catalogue import DOMAINS
from ascend_port.run.engine import RunResult

COLOURS = {"high": "green", "medium": "yellow", "low": "red"}


def print_text(result: RunResult, console: Console) -> None:
    rows = sorted(
        ((file.path, f) for file in result.files for f in file.findings),
        key=lambda row: (row[0], row[1].line, row[1].rule.id),
    )
    if not rows:
        return
    table = Table(show_edge=False, header_style="bold")
    for column in ("location", "rule", "confidence", "message"):
        table.add_column(column, overflow="fold")
    for path, f in rows:
        colour = COLOURS[f.confidence.label]
        table.add_row(
            escape(f"{path}:{f.line}"), f.rule.id, f"[{colour}]{f.confidence.label}[/{colour}]", escape(f.message)
        )
    console.print(table)
    totals = Table(title="per domain", show_edge=False, header_style="bold")
    for column in ("domain", "rewrites", "TODOs"):
        totals.add_column(column, justify="right" if column != "domain" else "left")
    by_domain = Counter((f.rule.domain, f.rule.rewrites) for _, f in rows)
    for domain in DOMAINS.values():
        if by_domain[(domain, True)] or by_domain[(domain, False)]:
            totals.add_row(domain, str(by_domain[(domain, True)]), str(by_domain[(domain, False)]))
    console.print(totals)
