"""`ascend-port rules`, `explain` and `todos`: the rules and what a port left to do."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ascend_port.cli.common import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, ExcludeOpt, Terminal, app
from ascend_port.core.catalogue import Rule, example_header
from ascend_port.rules.registry import all_rules, get_rule

RULE_FORMATS = ("table", "text", "json")


@app.command("rules")
def list_rules(
    output_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="table (the default on a terminal), text (one line a rule: the default in a pipe) or json.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """List every rule: ID, name, confidence, domain and summary."""
    term = Terminal()
    if output_format is not None and output_format not in RULE_FORMATS:
        raise term.fail(f"--format {escape(output_format)!r}: use one of {', '.join(RULE_FORMATS)}")
    shown = output_format or ("table" if term.out.is_terminal else "text")
    if shown == "json":
        typer.echo(json.dumps([_rule_record(r) for r in all_rules()], indent=2))
    elif shown == "text":
        for r in all_rules():  # plain text: never wrapped, so that grep and cut see one rule a line
            typer.echo(f"{r.id} {r.name} [{r.confidence.label}] {r.domain}: {r.summary}")
    else:
        from rich.table import Table

        table = Table(show_edge=False, header_style="bold")
        for column in ("rule", "name", "domain", "confidence", "summary"):
            table.add_column(column, overflow="fold")
        for r in all_rules():
            table.add_row(r.id, r.name, r.domain, r.confidence.label, escape(r.summary))
        term.out.print(table)


def _rule_record(r: Rule) -> dict[str, object]:
    return {
        "id": r.id,
        "name": r.name,
        "domain": r.domain,
        "confidence": r.confidence.label,
        "summary": r.summary,
        "informational": r.informational,
        "opt_in": r.opt_in,
        "retired": r.retired,
    }


@app.command()
def explain(
    rule: Annotated[str, typer.Argument(help="A rule's ID (NPU101), name (cuda-method) or ID prefix (NPU1).")],
) -> None:
    """Print a rule's documentation with its before/after example; for a prefix, each of its rules' in turn."""
    found = rules_matching(rule)
    if not found:
        raise Terminal().fail(f"no rule has the ID, name or ID prefix {escape(rule)!r}: `ascend-port rules` lists them")
    from rich.markdown import Markdown

    for r in found:
        where = f"\n\nCode: `{r.path}`." if r.path else ""
        if r.follows:
            where += f" Follows up the rewrites of {', '.join(r.follows)}."
        Terminal().out.print(
            Markdown(f"# {r.id} {r.name} ({r.confidence.label})\n\n{r.summary}\n\n" + _doc_markdown(r.doc) + where)
        )


def rules_matching(text: str) -> list[Rule]:
    """The rules ``text`` names: the one with that ID or name, else those whose ID starts with it (`NPU1`)."""
    key = text.strip()
    try:
        return [get_rule(key)]
    except KeyError:
        pass
    named = [r for r in all_rules() if r.name == key.lower()]
    if named:
        return named
    if re.fullmatch(r"(?i)npu\d{0,2}", key):
        return [r for r in all_rules() if r.id.startswith(key.upper())]
    return []


@app.command()
def todos(
    paths: Annotated[
        list[Path], typer.Argument(help="Files or folders to search for TODO comments.", show_default=False)
    ],
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
