"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning (``github/codeql-action/upload-sarif``).

One ``reportingDescriptor`` per rule of the catalogue (ID, kebab-case name, summary, documentation as help text
and markdown), one result per finding with its line in the scanned file, and for each applied rewrite a ``fix``
whose replacement is the edit that carries it out (whole lines: ``deletedRegion`` from column 1 of the first line
replaced to column 1 of the line after the last, ``insertedContent`` the new lines).

Levels follow confidence: a high or medium rewrite is a ``warning`` (``ascend-port apply`` fixes it), a low rule is
an ``error`` (manual work the tool cannot do: the code does not run on an NPU until someone does it), and a finding
that is information only (code that runs on an NPU as it is, such as NPU407) a ``note``. The rule's confidence is
also ``properties.precision``, which GitHub uses to sort alerts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence, Rule, example_header
from ascend_port.reports.model import DOMAIN_TITLES, Placed, Report, ReportEdit

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Confidence.HIGH: "warning", Confidence.MEDIUM: "warning", Confidence.LOW: "error"}
PRECISION = {Confidence.HIGH: "high", Confidence.MEDIUM: "medium", Confidence.LOW: "low"}
SRCROOT = "%SRCROOT%"


def _doc_markdown(rule: Rule) -> str:
    """The rule doc with its indented examples (Before/After/Stays) as fenced code blocks."""
    out: list[str] = [f"**{rule.id} {rule.name}** ({rule.confidence.label} confidence): {rule.summary}", ""]
    block: list[str] | None = None

    def close() -> None:
        while block and not block[-1]:
            block.pop()
        out.extend(["```", *(block or []), "```", ""])

    for line in rule.doc.splitlines():
        if example_header(line):
            if block is not None:
                close()
            out += [f"**{line.strip()}**", ""]
            block = []
        elif block is not None and (line[:1] in (" ", "\t") or not line.strip()):
            block.append(line[4:] if line.startswith("    ") else line.strip())
        else:
            if block is not None:
                close()
                block = None
            out.append(line)
    if block is not None:
        close()
    return "\n".join(out).strip() + "\n"


def _descriptor(rule: Rule) -> dict[str, Any]:
    first_paragraph = rule.doc.split("\n\n", 1)[0].replace("\n", " ").strip()
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": first_paragraph or rule.summary},
        "help": {"text": f"{rule.summary}\n\n{rule.doc}", "markdown": _doc_markdown(rule)},
        "defaultConfiguration": {"level": "note" if rule.informational else LEVELS[rule.confidence]},
        "properties": {
            "precision": PRECISION[rule.confidence],
            "confidence": rule.confidence.label,
            "tags": ["ascend-port", "npu-migration", DOMAIN_TITLES[rule.id[:4]]],
        },
    }


def _artifact(path: str) -> dict[str, Any]:
    """Relative paths stay relative to the directory of the run (``%SRCROOT%``), as code scanning expects."""
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(path.replace(os.sep, "/")), "uriBaseId": SRCROOT}


def _fix(edit: ReportEdit) -> dict[str, Any]:
    return {
        "description": {"text": "; ".join(dict.fromkeys(f"{f.rule.id}: {f.message}" for f in edit.findings))},
        "artifactChanges": [
            {
                "artifactLocation": _artifact(edit.path),
                "replacements": [
                    {
                        "deletedRegion": {
                            "startLine": edit.old_start + 1,
                            "startColumn": 1,
                            "endLine": edit.end_line,
                            "endColumn": edit.end_column,
                        },
                        "insertedContent": {"text": edit.new_text},
                    }
                ],
            }
        ],
    }


def _result(p: Placed, index: dict[str, int]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": p.rule.id,
        "ruleIndex": index[p.rule.id],
        "level": "note" if p.role == "info" else LEVELS[p.rule.confidence],
        "message": {"text": f"{p.finding.message} ({p.rule.id} {p.rule.name}, {p.rule.confidence.label})"},
        "locations": [{"physicalLocation": {"artifactLocation": _artifact(p.path), "region": {"startLine": p.line}}}],
        "properties": {"kind": p.finding.kind},
    }
    if p.edit is not None and p.role == "rewrite":
        result["fixes"] = [_fix(p.edit)]
    return result


def document(report: Report) -> dict[str, Any]:
    rules = list(report.rules)
    known = {r.id for r in rules}
    rules += sorted({p.rule for p in report.placed if p.rule.id not in known}, key=lambda r: r.id)  # retired
    index = {rule.id: i for i, rule in enumerate(rules)}
    notifications = [
        {
            "level": "error",
            "message": {"text": f"{file.path}: {file.error}"},
            "locations": [{"physicalLocation": {"artifactLocation": _artifact(file.path)}}],
        }
        for file in report.errors
    ]
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "ascend-port",
                        "version": report.version,
                        "semanticVersion": report.version,
                        "rules": [_descriptor(rule) for rule in rules],
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": Path.cwd().as_uri().rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "invocations": [
                    {"executionSuccessful": not report.errors, "toolExecutionNotifications": notifications}
                ],
                "results": [_result(p, index) for p in report.placed],
                # (what the rewrites may use: a port for another torch-npu release differs)
                "properties": {"torch_npu": report.target or npu_api.newest_release()},
            }
        ],
    }


def render(report: Report) -> str:
    return json.dumps(document(report), indent=2, ensure_ascii=False) + "\n"
