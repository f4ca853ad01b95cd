"""``--format md``: the migration assessment a team reads before it starts a port (and ``apply`` leaves in its
report folder): executive summary, dependency matrix, findings per domain, statistics, kernels, risk matrix."""

from __future__ import annotations

from collections import Counter

from ascend_port.reports.model import DOMAIN_TITLES, Report

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
        f"ascend-port {report.version}, for torch_npu {report.target or 'the newest release'}: {checked} files "
        f"checked, {len(report.changed)} to change, "
        f"{len(report.errors)} with errors. Lines are lines of the files as scanned.",
        "",
        "## Executive summary",
        "",
        f"**Feasibility: {report.feasibility}.** " + "; ".join(report.reasons) + ".",
        "",
        f"**Estimated effort: {report.hours:g} h**, {rewrites} automatic rewrites "
        f"({_percent(report.total.conversion_percent)} of {rewrites + manual} references) and {manual} items of "
        "manual work. The basis is a planning model (hours per item, `ascend_port/reports/effort.py`), not a "
        "measurement: redo the sum with your own numbers.",
        "",
    ]
    if report.effort:
        lines += ["| item | count | hours each | hours | basis |", "|---|---:|---:|---:|---|"]
        lines += [
            f"| {line.item} | {line.count} | {line.hours_each:g} | {line.hours:g} | {_cell(line.why)} |"
            for line in report.effort
        ]
        lines.append("")
    return lines


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
    empty = []
    for prefix, title in DOMAIN_TITLES.items():
        mine = [p for p in report.placed if p.rule.id.startswith(prefix)]
        if not mine:
            empty.append(title)
            continue
        roles = Counter(p.role for p in mine)
        info = f", {roles['info']} compatible as is" if roles["info"] else ""
        lines += [
            f"### {title} ({prefix}xx): {roles['rewrite']} rewrites, {roles['manual']} manual{info}",
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


def _risks(report: Report) -> list[str]:
    lines = ["## Risk matrix", ""]
    if not report.risks:
        return lines + ["Nothing to port.", ""]
    lines += [
        "Each pattern found, what the port does with it, and how sure it is (low confidence: manual work).",
        "",
        "| pattern | replacement | confidence | risk | count | rule |",
        "|---|---|---|---|---:|---|",
    ]
    for r in report.risks:
        replacement = _code(r.replacement) if r.rule.rewrites else r.replacement
        lines.append(
            f"| {_code(r.pattern)} | {replacement} | {r.rule.confidence.label} | {r.risk} | "
            f"{r.count} | {r.rule.id} {r.rule.name} |"
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
        _statistics(report),
        _kernels(report),
        _risks(report),
        _errors(report),
        _skipped(report),
    ]
    return "\n".join(line for part in parts for line in part).rstrip("\n") + "\n"
