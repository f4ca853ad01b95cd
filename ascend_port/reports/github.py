"""``--format github``: GitHub Actions workflow commands, one annotation per finding on the pull request's diff.

``::warning`` for a high or medium rewrite (``ascend-port apply`` makes it) and ``::error`` for a low rule (manual
work: the code does not run on an NPU until someone does it), as in the SARIF output; ``::notice`` for information
only (NPU407: runs on an NPU as it is). Values are escaped as the
Actions runner expects (``%``, CR and LF everywhere; ``:`` and ``,`` in properties too).
"""

from __future__ import annotations

from ascend_port.reports.model import Report
from ascend_port.reports.sarif import LEVELS

NEEDS_EDITS = False  # findings and their lines only: nothing is read or diffed (reports.render)


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(report: Report) -> str:
    lines = []
    for p in report.placed:
        level = "notice" if p.role == "info" else LEVELS[p.rule.confidence]
        title = f"ascend-port {p.rule.id} {p.rule.name} ({p.rule.confidence.label})"
        lines.append(
            f"::{level} file={_property(p.path)},line={p.line},title={_property(title)}::"
            f"{_data(f'{p.rule.id} {p.finding.message}')}"
        )
    for file in report.errors:
        lines.append(f"::error file={_property(file.path)},title=ascend-port::{_data(file.error or '')}")
    return "".join(line + "\n" for line in lines)
