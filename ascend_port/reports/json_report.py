"""``--format json``: the whole assessment, machine-readable. The schema is ``report.schema.json`` next to this
module (shipped as package data); ``SCHEMA_VERSION`` changes with it: the major number when a field is removed
or changes meaning, the minor one when a field is added."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from typing import Any

from ascend_port.reports import effort as effort_model
from ascend_port.reports.model import DOMAIN_TITLES, Report, ReportEdit, pattern_and_replacement

SCHEMA_VERSION = "1.2"


def schema() -> dict[str, Any]:
    return json.loads(resources.files("ascend_port.reports").joinpath("report.schema.json").read_text("utf-8"))


def _edit_id(edit: ReportEdit | None, ids: dict[int, int]) -> int | None:
    return None if edit is None else ids[id(edit)]


def _stats(s) -> dict[str, Any]:
    return {
        "converted": s.converted,
        "unconverted": s.unconverted,
        "conversion_percent": s.conversion_percent,
        "lines_total": s.lines_total,
        "lines_changed": s.lines_changed,
        "changed_percent": s.changed_percent,
    }


def document(report: Report) -> dict[str, Any]:
    ids = {id(edit): index for index, edit in enumerate(report.edits)}
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "ascend-port", "version": report.version, "torch_npu": report.target},
        "summary": _summary(report),
        "statistics": {
            "total": _stats(report.total),
            "files": [{"path": s.path, **_stats(s)} for s in report.stats],
        },
        "domains": _domains(report),
        "findings": _findings(report, ids),
        "edits": _edits(report),
        "dependencies": [
            {
                "package": d.name,
                "status": d.status,
                "replacement": d.replacement,
                "note": d.note,
                "known": d.known,
                "sources": d.sources,
            }
            for d in report.dependencies
        ],
        "kernels": [
            {
                "path": k.path,
                "line": k.line,
                "rule": k.rule.id,
                "kind": k.kind,
                "name": k.name,
                "lines": k.lines,
                "kernels": k.kernels,
                "message": k.message,
            }
            for k in report.kernels
        ],
        "risks": [
            {
                "rule": r.rule.id,
                "name": r.rule.name,
                "pattern": r.pattern,
                "replacement": r.replacement,
                "confidence": r.rule.confidence.label,
                "risk": r.risk,
                "count": r.count,
                "location": r.location,
                "code": r.code,
                "becomes": r.becomes,
            }
            for r in report.risks
        ],
        "rules": _rules(report),
        "performance": _performance(report),
        "errors": [{"path": f.path, "error": f.error} for f in report.errors],
        "skipped": [{"path": f.path, "reason": f.skipped} for f in report.files if f.skipped]
        + [{"path": s.path, "reason": s.reason} for s in report.skipped],
    }


def _summary(report: Report) -> dict[str, Any]:
    """The verdict and its effort estimate, and the files and findings counted."""
    roles = Counter(p.role for p in report.placed)
    return {
        "feasibility": report.feasibility,
        "reasons": report.reasons,
        "effort_hours": report.hours,
        "effort_basis": [
            {
                "item": line.item,
                "count": line.count,
                "hours_each": line.hours_each,
                "hours": line.hours,
                "why": line.why,
            }
            for line in report.effort
        ],
        "hard_threshold_hours": effort_model.HARD_HOURS,
        "files_checked": sum(1 for f in report.files if not f.skipped),
        "files_to_change": len(report.changed),
        "files_with_errors": len(report.errors),
        "rewrites": roles["rewrite"],
        "manual": roles["manual"],
        "info": roles["info"],
    }


def _domains(report: Report) -> list[dict[str, Any]]:
    """Each rule domain, in ID order, with its findings counted by role."""
    domains = []
    for prefix, title in DOMAIN_TITLES.items():
        mine = [p for p in report.placed if p.rule.id.startswith(prefix)]
        counts = Counter(p.role for p in mine)
        domains.append(
            {
                "prefix": prefix,
                "title": title,
                "rewrites": counts["rewrite"],
                "manual": counts["manual"],
                "info": counts["info"],
            }
        )
    return domains


def _findings(report: Report, ids: dict[int, int]) -> list[dict[str, Any]]:
    """The placed findings; ``edit`` is the index in ``edits`` of the edit that carries a finding out."""
    return [
        {
            "path": p.path,
            "line": p.line,
            "rule": p.rule.id,
            "name": p.rule.name,
            "confidence": p.rule.confidence.label,
            "domain": DOMAIN_TITLES[p.rule.id[:4]],
            "kind": p.finding.kind,
            "role": p.role,
            "applied": p.finding.applied,
            "message": p.finding.message,
            "edit": _edit_id(p.edit, ids),
        }
        for p in report.placed
    ]


def _edits(report: Report) -> list[dict[str, Any]]:
    return [
        {
            "id": index,
            "path": e.path,
            "operation": e.operation,
            "start_line": e.start_line,
            "end_line": e.last_line,
            "old_text": e.old_text,
            "new_text": e.new_text,
            "rules": sorted({f.rule.id for f in e.findings}),
        }
        for index, e in enumerate(report.edits)
    ]


def _performance(report: Report) -> dict[str, Any]:
    """What the port made faster, and what it left with the expected effect and its source."""
    section = report.performance
    return {
        "done": [{"rule": d.rule.id, "name": d.rule.name, "count": d.count} for d in section.done],
        "left": [
            {
                "rule": left.rule.id,
                "name": left.rule.name,
                "count": left.count,
                "why": left.why,
                "effect": left.figure.effect,
                "figure": left.figure.figure,
                "source": left.figure.source,
                "url": left.figure.url,
            }
            for left in section.left
        ],
    }


def _rules(report: Report) -> list[dict[str, Any]]:
    """The catalogue entries of the rules that found something."""
    fired = {p.rule.id for p in report.placed}
    return [
        {
            "id": rule.id,
            "name": rule.name,
            "confidence": rule.confidence.label,
            "summary": rule.summary,
            "pattern": pattern_and_replacement(rule)[0],
            "replacement": pattern_and_replacement(rule)[1],
        }
        for rule in report.rules
        if rule.id in fired
    ]


def render(report: Report) -> str:
    return json.dumps(document(report), indent=2, ensure_ascii=False) + "\n"
