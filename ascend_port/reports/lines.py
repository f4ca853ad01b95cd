"""The one line-number convention of every format (text, concise, md, json, sarif, csv, github): lines are 1-based
lines of the files as scanned, before the port. A finding about a line the port adds (NPU100's ``import
torch_npu``, reported by the engine with its line in the ported file) is placed on the line the addition follows,
read off the file's own unified diff (``FileResult.diff``), so no format needs the old bytes to place it.

Light on purpose: the console formats import it without the report model (and its rule catalogue).
"""

from __future__ import annotations

import re

from ascend_port.core.findings import FileResult, Finding

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def old_line(diff: bytes, new_line: int) -> int:
    """The line of the scanned file that line ``new_line`` of the ported one stands at, from the file's unified
    diff: an added line is placed on the old line it follows (1 at the top of the file)."""
    old_next = new_next = 1  # the next line number on each side
    in_hunk = False
    for raw in diff.splitlines():
        m = _HUNK.match(raw) if raw.startswith(b"@@") else None
        if m is not None:
            # (an empty side names the line before it: "-4,0" inserts after line 4)
            old_start = int(m.group(1)) + (1 if m.group(2) == b"0" else 0)
            new_start = int(m.group(3)) + (1 if m.group(4) == b"0" else 0)
            if new_line < new_start:
                break
            old_next, new_next, in_hunk = old_start, new_start, True
        elif not in_hunk or raw.startswith(b"\\"):
            continue  # the ---/+++ header, "\ No newline at end of file"
        elif raw.startswith(b"+"):
            if new_next == new_line:
                return max(1, old_next - 1)
            new_next += 1
        elif raw.startswith(b"-"):
            old_next += 1
        else:
            if new_next == new_line:
                return old_next
            old_next, new_next = old_next + 1, new_next + 1
    return max(1, old_next + (new_line - new_next))


def scanned_line(file: FileResult, finding: Finding) -> int:
    """The line of ``finding`` in the file as scanned, the one every format shows: a finding about a line the port
    adds (NPU100's ``import torch_npu``) is placed on the line the addition follows."""
    if finding.rule.line_in_new_text and file.diff:
        return old_line(file.diff, finding.line)
    return finding.line
