"""``--format md``: the migration assessment a team reads before it starts a port (and ``apply`` leaves in its
report folder): executive summary, dependency matrix, findings per domain, statistics, kernels, risk matrix."""

from __future__ import annotations

import posixpath
from collections import Counter

from ascend_port.core.words import counted
from ascend_port.reports.model import DOMAIN_TITLES, Report
from ascend_port.reports.performance import source_text

TITLE = "# Migration assessment: CUDA to Ascend NPU"


def _cell(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _code(text: str) -> str:
    """``text`` as an inline code span (a span cannot hold ``|`` in a table cell, so that is escaped too)."""
    if not text:
        return ""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    body = text.replace("|", "\\|")
    return f"{fence}{pad}{body}{pad}{fence}"


def _percent(value: float | None) -> str:
    return "n.a." if value is None else f"{value:.1f} %"


def _summary(report: Report) -> list[str]:
    checked = sum(1 for f in report.files if not f.skipped)
    rewrites = sum(1 for p in report.placed if p.role == "rewrite")
    manual = sum(1 for p in report.placed if p.role == "manual")
    lines = [
        TITLE,
        "",
        f"ascend-port {report.version}, for torch_npu {report.target or 'the newest release'}: "
        f"{counted(checked, 'file', 'files')} checked, {len(report.changed)} to change, "
        f"{len(report.errors)} with errors. Lines are lines of the files as scanned.",
        "",
        "## Executive summary",
        "",
        f"**Feasibility: {report.feasibility}.** " + "; ".join(report.reasons) + ".",
        "",
        f"**Estimated effort: {report.hours:g} h**, {counted(rewrites, 'automatic rewrite', 'automatic rewrites')} "
        f"({_percent(report.total.conversion_percent)} of {counted(rewrites + manual, 'reference', 'references')}) "
        f"and {counted(manual, 'item', 'items')} of manual work. The basis is a planning model (hours per item, "
        "`ascend_port/reports/effort.py`), not a measurement: redo the sum with your own numbers.",
        "",
    ]
    if report.effort:
        lines += ["| item | count | hours each | hours | basis |", "|---|---:|---:|---:|---|"]
        lines += [
            f"| {line.item} | {line.count} | {line.hours_each:g} | {line.hours:g} | {_cell(line.why)} |"
            for line in report.effort
        ]
        lines.append("")
        lines += _effort_chart(report)
    return lines


def _label(text: str) -> str:
    """A Mermaid label: quoted, without the characters that end or break one."""
    return '"' + text.replace('"', "'").replace("\n", " ").replace("`", "'") + '"'


def _effort_chart(report: Report) -> list[str]:
    """A pie of the estimated hours by item (GitHub renders Mermaid)."""
    items = [line for line in report.effort if line.hours > 0]
    if not items:
        return []
    lines = ["```mermaid", "pie showData", f"    title Estimated effort: {report.hours:g} h by item"]
    lines += [f"    {_label(line.item)} : {line.hours:g}" for line in items]
    return lines + ["```", ""]


def _domain_chart(counts: dict[str, Counter[str]]) -> list[str]:
    """Findings per domain as bars stacked by confidence: high at the bottom, then medium, then low (manual work)
    and information on top. (Mermaid's xychart draws several bar series over each other: each series is the sum
    of the levels up to its own, tallest first.)"""
    if not counts:
        return []
    titles = list(counts)
    levels = ("low", "medium", "high")  # the series from the tallest (all levels) down to high alone

    def upto(title: str, level: str) -> int:
        kept = levels[levels.index(level) :]
        return sum(n for key, n in counts[title].items() if key in kept or (key == "info" and level == "low"))

    lines = [
        "```mermaid",
        "xychart-beta",
        '    title "Findings per domain: high confidence at the bottom, then medium, then low on top"',
        f"    x-axis [{', '.join(_label(t) for t in titles)}]",
        '    y-axis "findings"',
    ]
    lines += [f"    bar [{', '.join(str(upto(t, level)) for t in titles)}]" for level in levels]
    return lines + ["```", ""]


def _dependencies(report: Report) -> list[str]:
    lines = ["## Dependencies", ""]
    if not report.dependencies:
        return lines + ["No third-party imports or requirements found.", ""]
    lines += [
        "Third-party packages the project imports or requires: `compatible` runs as it is, `replace` has an "
        "Ascend counterpart, `unsupported` is CUDA-only, `n.a.` has no device code (*unknown*: not in "
        "ascend-port's table, check it by hand).",
        "",
        "| package | status | on Ascend | note | found in |",
        "|---|---|---|---|---|",
    ]
    for d in report.dependencies:
        status = d.status if d.known else f"{d.status} (*unknown*)"
        where = ", ".join(d.sources[:3]) + (f" and {len(d.sources) - 3} more" if len(d.sources) > 3 else "")
        lines.append(f"| {_cell(d.name)} | {status} | {_cell(d.replacement)} | {_cell(d.note)} | {_cell(where)} |")
    return lines + [""]


def _domains(report: Report) -> list[str]:
    lines = ["## Findings per domain", ""]
    by_domain: dict[str, Counter[str]] = {}
    for p in report.placed:
        level = "info" if p.role == "info" else p.rule.confidence.label
        by_domain.setdefault(DOMAIN_TITLES[p.rule.id[:4]], Counter())[level] += 1
    ordered = {title: by_domain[title] for title in DOMAIN_TITLES.values() if title in by_domain}
    if ordered:
        lines += ["| domain | high | medium | low | info |", "|---|---:|---:|---:|---:|"]
        lines += [
            f"| {_cell(title)} | {c['high']} | {c['medium']} | {c['low']} | {c['info']} |"
            for title, c in ordered.items()
        ]
        lines.append("")
        lines += _domain_chart(ordered)
    empty = []
    for prefix, title in DOMAIN_TITLES.items():
        mine = [p for p in report.placed if p.rule.id.startswith(prefix)]
        if not mine:
            empty.append(title)
            continue
        roles = Counter(p.role for p in mine)
        info = f", {roles['info']} compatible as is" if roles["info"] else ""
        lines += [
            f"### {title} ({prefix}xx): {counted(roles['rewrite'], 'rewrite', 'rewrites')}, {roles['manual']} "
            f"manual{info}",
            "",
            "| location | rule | confidence | kind | message |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {_cell(p.path)}:{p.line} | {p.rule.id} | {p.rule.confidence.label} | {p.finding.kind} | "
            f"{_cell(p.finding.message)} |"
            for p in mine
        ]
        lines.append("")
    if empty:
        lines += [f"No findings: {', '.join(empty)}.", ""]
    return lines


def _directories(report: Report) -> list[str]:
    """Findings rolled up by the folder of their file, most manual work first: where to send people."""
    rows: dict[str, Counter[str]] = {}
    files: dict[str, set[str]] = {}
    for p in report.placed:
        folder = posixpath.dirname(p.path.replace("\\", "/")) or "."
        rows.setdefault(folder, Counter())[p.role] += 1
        files.setdefault(folder, set()).add(p.path)
    if not rows:
        return []
    lines = [
        "## Per directory",
        "",
        "Findings by the folder of their file, sorted by manual work (TODOs and report-only findings).",
        "",
        "| directory | files | manual | rewrites | info |",
        "|---|---:|---:|---:|---:|",
    ]
    order = sorted(rows, key=lambda d: (-rows[d]["manual"], -rows[d]["rewrite"], d))
    lines += [
        f"| {_cell(d)} | {len(files[d])} | {rows[d]['manual']} | {rows[d]['rewrite']} | {rows[d]['info']} |"
        for d in order
    ]
    return lines + [""]


def _statistics(report: Report) -> list[str]:
    lines = [
        "## Statistics",
        "",
        "As HIPIFY counts them: references converted automatically and left for manual work (TODOs and "
        "report-only findings), per file and in total; a changed line is the larger of the lines an edit "
        "removes and writes.",
        "",
        "| file | converted | manual | conversion | lines changed | lines | code changed |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for s in [*report.stats, report.total]:
        name = "**total**" if s is report.total else _cell(s.path)
        lines.append(
            f"| {name} | {s.converted} | {s.unconverted} | {_percent(s.conversion_percent)} | "
            f"{s.lines_changed} | {s.lines_total} | {_percent(s.changed_percent)} |"
        )
    return lines + [""]


def _kernels(report: Report) -> list[str]:
    lines = ["## Kernels", ""]
    if not report.kernels:
        return lines + ["No CUDA (.cu/.cuh) or Triton kernels found.", ""]
    lines += ["| location | kind | name | lines | kernels | rule | message |", "|---|---|---|---:|---:|---|---|"]
    for k in report.kernels:
        lines.append(
            f"| {_cell(k.path)}:{k.line} | {k.kind} | {_code(k.name)} | "
            f"{'' if k.lines is None else k.lines} | {k.kernels} | {k.rule.id} | {_cell(k.message)} |"
        )
    return lines + [""]


def _performance(report: Report) -> list[str]:
    lines = ["## Performance", ""]
    section = report.performance
    if not section:
        return lines + ["Nothing to report: no fused operator, run setting or performance note.", ""]
    if section.done:
        lines += ["What the port made faster:", "", "| rule | what | count |", "|---|---|---:|"]
        lines += [f"| {d.rule.id} | {d.rule.name}: {_cell(d.rule.summary)} | {d.count} |" for d in section.done]
        lines.append("")
    if section.left:
        lines += [
            "What it left, why (the first finding's message), and the expected effect of each, as published: a "
            "figure only where its source gives one.",
            "",
            "| rule | count | why | expected effect | figure | source |",
            "|---|---:|---|---|---|---|",
        ]
        for left in section.left:
            figure = left.figure
            lines.append(
                f"| {left.rule.id} {left.rule.name} | {left.count} | {_cell(left.why)} | {_cell(figure.effect)} | "
                f"{_cell(figure.figure)} | {_cell(source_text(figure))} |"
            )
        lines.append("")
    return lines


def _risks(report: Report) -> list[str]:
    lines = ["## Risk matrix", ""]
    if not report.risks:
        return lines + ["Nothing to port.", ""]
    lines += [
        "Each rule the scan found, with the project's own first occurrence (where, its code, what the port makes of "
        "it) and how sure the port is (low confidence: manual work). `ascend-port explain RULE` shows the rule's "
        "documentation.",
        "",
        "| rule | first occurrence | code | the port makes it | confidence | risk | count |",
        "|---|---|---|---|---|---|---:|",
    ]
    for r in report.risks:
        becomes = _code(r.becomes) if r.rule.rewrites and r.becomes else _cell(r.becomes)
        lines.append(
            f"| {r.rule.id} {r.rule.name} | {_cell(r.location)} | {_code(r.code)} | {becomes} | "
            f"{r.rule.confidence.label} | {r.risk} | {r.count} |"
        )
    return lines + [""]


def _errors(report: Report) -> list[str]:
    if not report.errors:
        return []
    return ["## Errors", "", *(f"- {_cell(f.path)}: {_cell(f.error)}" for f in report.errors), ""]


def _skipped(report: Report) -> list[str]:
    """The files that ignore rules or excludes left out: never ported, so listed where the team reads the plan."""
    if not report.skipped:
        return []
    lines = ["## Skipped files", "", "Not checked or ported: ignored by git or excluded by a pattern.", ""]
    return lines + [f"- {_cell(s.path)}: {_cell(s.reason)}" for s in report.skipped] + [""]


def render(report: Report) -> str:
    parts = [
        _summary(report),
        _dependencies(report),
        _domains(report),
        _directories(report),
        _statistics(report),
        _kernels(report),
        _risks(report),
        _performance(report),
        _errors(report),
        _skipped(report),
    ]
    return "\n".join(line for part in parts for line in part).rstrip("\n") + "\n"
