"""The reports of a run: ``scan --format text|concise|md|json|sarif|csv|github`` and the assessment files
``apply`` leaves in its report folder. ``model.build`` makes the data once; each format is one module that renders it.

For the git workflow: ``write_assessment(result, folder, old=...)`` writes ``assessment.md``, ``assessment.json``,
``assessment.sarif`` and ``change_list.csv`` into ``folder``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path

from ascend_port.run.engine import RunResult

FORMATS = ("text", "concise", "md", "json", "sarif", "csv", "github")
_MODULES = {"md": "markdown", "json": "json_report", "sarif": "sarif", "csv": "csv_report", "github": "github"}
ASSESSMENT_FILES = {
    "md": "assessment.md",
    "json": "assessment.json",
    "sarif": "assessment.sarif",
    "csv": "change_list.csv",
}


def render(result: RunResult, fmt: str, old: Mapping[str, bytes] | None = None) -> str:
    """The report of ``result`` in format ``fmt`` (any of ``FORMATS`` but ``text`` and
    ``concise``, the console formats of reports/text.py)."""
    from ascend_port.reports.model import build

    if fmt not in _MODULES:
        raise ValueError(f"unknown report format {fmt!r}: use one of {', '.join(FORMATS)}")
    module = importlib.import_module(f"ascend_port.reports.{_MODULES[fmt]}")
    # Only what the format shows is built: the github annotations need neither the edits nor the files' bytes.
    return module.render(build(result, old, edits=getattr(module, "NEEDS_EDITS", True)))


def write_assessment(result: RunResult, folder: Path, old: Mapping[str, bytes] | None = None) -> list[Path]:
    """Write the assessment of ``result`` into ``folder`` (created if needed) and return the files written.

    ``old`` maps ``FileResult.path`` (or the absolute path) to a file's bytes before the port: pass it when the port
    is already written to disk (otherwise the edits of those files are left out of the reports; their findings stay
    in)."""
    from ascend_port.reports.model import build

    report = build(result, old)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt, name in ASSESSMENT_FILES.items():
        module = importlib.import_module(f"ascend_port.reports.{_MODULES[fmt]}")
        target = folder / name
        target.write_text(module.render(report), "utf-8", newline="")
        written.append(target)
    return written
