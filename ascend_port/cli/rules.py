"""`ascend-port rules`, `explain` and `todos`: the rules and what a port left to do."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from ascend_port.cli.common import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, ExcludeOpt, PathsArg, Terminal, app
from ascend_port.core.catalogue import example_header
from ascend_port.rules.registry import all_rules, get_rule


@app.command("rules")
def list_rules() -> None:
    """List every rule: ID, name, confidence and summary."""
    from rich.table import Table

    table = Table(show_edge=False, header_style="bold")
    for column in ("rule", "name", "domain", "confidence", "summary"):
        table.add_column(column, overflow="fold")
    for r in all_rules():
        table.add_row(r.id, r.name, r.domain, r.confidence.label, r.summary)
    Terminal().out.print(table)


@app.command()
def explain(rule_id: Annotated[str, typer.Argument(help="A rule ID such as NPU101.")]) -> None:
    """Print one rule's documentation with its before/after example."""
    try:
        r = get_rule(rule_id)
    except KeyError as error:
        raise Terminal().fail(error.args[0]) from None
    from rich.markdown import Markdown

    where = f"\n\nCode: `{r.path}`." if r.path else ""
    if r.follows:
        where += f" Follows up the rewrites of {', '.join(r.follows)}."
    Terminal().out.print(
        Markdown(f"# {r.id} {r.name} ({r.confidence.label})\n\n{r.summary}\n\n" + _doc_markdown(r.doc) + where)
    )


@app.command()
def todos(
    paths: PathsArg,
    check: Annotated[bool, typer.Option("--check", help="Exit 1 while any TODO remains (for CI).")] = False,
    exclude: ExcludeOpt = None,
) -> None:
    """List the ascend-port TODO comments left in the files (file:line, rule, confidence, text) by rule."""
    from ascend_port.run.todos import find_todos, render

    term = Terminal()
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise term.fail(f"no such file or directory: {missing[0]}")
    report = find_todos(paths, tuple(exclude or ()))
    for line in render(report):
        typer.echo(line)  # plain text: the messages hold brackets, and long lines must not be wrapped
    for path, reason in report.errors:
        term.error(f"{escape(path)}: {escape(reason)}")
    raise typer.Exit(EXIT_ERROR if report.errors else EXIT_FINDINGS if check and report.todos else EXIT_CLEAN)


def _doc_markdown(doc: str) -> str:
    """Rule docs keep their examples (``Before:``, ``After:``, ``Stays:``) as indented blocks; show them as code."""
    lines = []
    for line in doc.splitlines():
        if example_header(line):
            lines.append(f"\n**{line.strip()}**\n")
        else:
            lines.append(line)
    return "\n".join(lines)
