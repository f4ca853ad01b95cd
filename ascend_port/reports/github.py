"""``--format github``: GitHub Actions workflow commands, one annotation per finding on the pull request's diff.

GitHub shows at most 10 annotations of each kind (error, warning, notice) per step, so the manual work must never be
hidden behind rewrites: a finding that needs a person (a TODO, a report-only finding) is a ``::warning`` and comes
first; a rewrite (``ascend-port apply`` makes it, the check step's diff shows it) is a ``::notice``, and so is
information (NPU407: runs on an NPU as it is), last; a file that cannot be read is an ``::error``. Values are escaped
as the Actions runner expects (``%``, CR and LF everywhere; ``:`` and ``,`` in properties too).
"""

from __future__ import annotations

from ascend_port.reports.model import Report

NEEDS_EDITS = False  # findings and their lines only: nothing is read or diffed (reports.render)


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


# The annotation kind of each role, and the roles in the order of the annotations (the manual work first).
LEVELS = {"manual": "warning", "rewrite": "notice", "info": "notice"}
ORDER = ("manual", "rewrite", "info")


def render(report: Report) -> str:
    lines = []
    for p in sorted(report.placed, key=lambda p: ORDER.index(p.role)):  # stable: in file order within a role
        level = LEVELS[p.role]
        title = f"ascend-port {p.rule.id} {p.rule.name} ({p.rule.confidence.label})"
        lines.append(
            f"::{level} file={_property(p.path)},line={p.line},title={_property(title)}::"
            f"{_data(f'{p.rule.id} {p.finding.message}')}"
        )
    for file in report.errors:
        lines.append(f"::error file={_property(file.path)},title=ascend-port::{_data(file.error or '')}")
    return "".join(line + "\n" for line in lines)
