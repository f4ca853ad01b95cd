"""``--format csv``: one row per finding (with the edit that carries it out) and per edit no finding explains.

The first five columns are msFmkTransplt's ``change_list.csv`` (File, Start Line, End Line, Operation Type,
Message) so the two tools' outputs can be compared; Rule and Confidence follow. Operation Type is ``INSERT``,
``MODIFY`` or ``DELETE`` for an edit (a TODO comment is an ``INSERT``) and ``REPORT`` for a finding that changes
nothing. Lines are lines of the file as scanned: Start Line is the finding's line, as every format gives it (NPU100's
is the line its import goes after), and End Line the last line its edit changes (the same line for an insertion).
An edit no finding explains names the lines it changes, an insertion the line it goes before.
"""

from __future__ import annotations

import csv
import io

from ascend_port.reports.model import Report

HEADER = ("File", "Start Line", "End Line", "Operation Type", "Message", "Rule", "Confidence")


def rows(report: Report) -> list[tuple[str, int, int, str, str, str, str]]:
    out = []
    explained: set[int] = set()
    for p in report.placed:
        if p.edit is not None:
            explained.add(id(p.edit))
            out.append(
                (
                    p.path,
                    p.line,
                    max(p.line, p.edit.last_line) if p.edit.operation != "INSERT" else p.line,
                    p.edit.operation,
                    p.finding.message,
                    p.rule.id,
                    p.rule.confidence.label,
                )
            )
        else:
            out.append((p.path, p.line, p.line, "REPORT", p.finding.message, p.rule.id, p.rule.confidence.label))
    for edit in report.edits:
        if id(edit) not in explained:
            out.append((edit.path, edit.start_line, edit.last_line, edit.operation, "", "", ""))
    return sorted(out, key=lambda row: (row[0], row[1], row[2], row[5]))


def render(report: Report) -> str:
    stream = io.StringIO()
    writer = csv.writer(stream)  # RFC 4180: CRLF line ends, quotes where needed
    writer.writerow(HEADER)
    writer.writerows(rows(report))
    return stream.getvalue()
