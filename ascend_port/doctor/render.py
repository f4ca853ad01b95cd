"""The doctor's report as text (one line a check, the fix under a problem) and as JSON (schema:
``ascend_port/data/doctor.schema.json``)."""

from __future__ import annotations

import json
from typing import Any

from ascend_port import __version__
from ascend_port.doctor.checks import FAIL, WARN, Report, what_doctor_checks

SCHEMA_VERSION = 1
MARKS = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL", "skip": "skip"}


def as_data(report: Report) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": f"ascend-port {__version__}",
        "npu_host": report.npu_host,
        "full": report.full,
        "summary": report.counts(),
        "checks": [
            {"id": f.id, "title": f.title, "status": f.status, "found": f.found, "fix": f.fix} for f in report.findings
        ],
        "would_check": [] if report.npu_host else what_doctor_checks(report.full),
    }


def as_json(report: Report) -> str:
    return json.dumps(as_data(report), indent=2) + "\n"


def as_text(report: Report) -> list[str]:
    if not report.npu_host:
        return [
            "No Ascend NPU on this host: no /usr/local/Ascend/driver, no /dev/davinci* device and no npu-smi.",
            "On an Ascend host, doctor checks:",
            *(f"  - {what}" for what in what_doctor_checks(report.full)),
        ]
    lines = []
    for f in report.findings:
        lines.append(f"[{MARKS[f.status]}] {f.title}: {f.found}")
        if f.fix and f.status in (WARN, FAIL):
            lines.append(f"       fix: {f.fix}")
    counts = report.counts()
    lines.append(
        f"{counts['fail']} failed, {counts['warn']} warnings, {counts['ok']} ok, {counts['skip']} skipped"
        + ("" if report.full else " (--full adds each NPU's health and a torch_npu import)")
    )
    return lines
