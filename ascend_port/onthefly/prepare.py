"""The parent's side of `ascend-port run`: the project ported as `apply` ports it (the same rules, configuration and
result cache: run/engine.py), its Python modules written as a manifest for the import side in the program's
processes (bootstrap/_ascend_port_onthefly.py), in a scratch folder. The project's files are only read."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ascend_port.core.diffing import git_lines, line_opcodes
from ascend_port.core.findings import FileResult
from ascend_port.core.sources import SourceError, decode_python
from ascend_port.run.engine import RunResult

MANIFEST = "manifest.json"


@dataclass
class Prepared:
    """What the program's processes are given: the manifest, and what it came from."""

    manifest: Path
    result: RunResult
    modules: dict[str, FileResult] = field(default_factory=dict)  # real path of each ported module → its result
    others: list[FileResult] = field(default_factory=list)  # files the port would change that are not Python


def line_map(old: str, new: str) -> tuple[list[int], list[int]]:
    """For each line of ``new`` (the port of ``old``), the line of ``old`` it stands for (1-based); and the lines
    of ``new`` whose text is not ``old``'s. A line the port inserted (an import, a TODO comment) stands for the line
    it precedes, so an error raised there is shown at the code the port changed; a replaced block maps line by line
    and its extra lines to its last line. The lines are paired as in the port's diff (core/diffing.py), lines as
    Python and git count them (a form feed ends none)."""
    old_lines, new_lines = git_lines(old), git_lines(new)
    lines: list[int] = [0] * len(new_lines)
    changed: list[int] = []
    last = max(1, len(old_lines))
    for tag, i1, i2, j1, j2 in line_opcodes(old_lines, new_lines):
        for j in range(j1, j2):
            if tag == "equal":
                lines[j] = i1 + (j - j1) + 1
                continue
            changed.append(j + 1)
            lines[j] = min(i1 + min(j - j1, max(i2 - i1 - 1, 0)) + 1, last)
    return lines, changed


def prepare(result: RunResult, folder: Path) -> Prepared:
    """Write the manifest of ``result``'s ported Python modules into ``folder``."""
    prepared = Prepared(folder / MANIFEST, result)
    entries: dict[str, dict] = {}
    for number, file in enumerate(result.changed):
        if not file.path.endswith(".py") or file.new_bytes is None:
            if file.new_bytes is not None:
                prepared.others.append(file)
            continue
        path = Path(file.path).resolve()
        try:
            new = decode_python(file.new_bytes).text
            old = "" if file.path in result.created else decode_python(path.read_bytes()).text
        except (OSError, SourceError):
            continue  # (the port read it a moment ago; a file gone since is imported as it is, or not at all)
        source = folder / f"{number}_{path.name}"
        source.write_text(new, "utf-8")
        # A module the port creates has no file to point at: its lines are its own (shown through its loader).
        lines, changed = line_map(old, new) if old else (list(range(1, len(git_lines(new)) + 1)), [])
        entries[str(path)] = {
            "source": str(source),
            "lines": lines,
            "changed": changed,
            "created": file.path in result.created,
        }
        prepared.modules[str(path)] = file
    prepared.manifest.write_text(json.dumps({"modules": entries}), "utf-8")
    return prepared
