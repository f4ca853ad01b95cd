"""The report folder of the git workflow (``.ascend-port/`` at the repository root by default): one
``<path>.diff`` per changed file (a patch ``git apply`` accepts at the repository root), ``summary.md`` (the run,
its commits and the findings table) and ``files.txt`` (the changed paths, one per line)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ascend_port import __version__
from ascend_port.core.findings import FileResult, Finding
from ascend_port.git.domains import ORDER, TITLES, FilePlan
from ascend_port.reports.lines import old_line
from ascend_port.run.hunks import diff_bytes

HEADER = "# ascend-port report"
BEFORE_REVIEW = "before-review"  # after a review: the assessment of the whole port, which is not what was committed


@dataclass
class RunInfo:
    base: str  # "main at 1a2b3c4"
    branch: str
    commits: list[tuple[str, str]] = field(default_factory=list)  # (short sha, subject)
    committed: bool = True
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    reviewed: str = ""  # "12 of 15 hunks accepted" after --interactive
    target: str = ""  # the torch-npu release the port targets (what its rewrites may use)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _scanned(plan: FilePlan, f: Finding) -> int:
    """The finding's line in the file before the port, as every report gives it (reports/lines.py)."""
    if not f.rule.line_in_new_text:
        return f.line
    return old_line(diff_bytes(plan.path, plan.old, plan.new, created=not plan.old), f.line)


def summary(plans: list[FilePlan], errors: list[FileResult], info: RunInfo) -> str:
    target = f" for torch_npu {info.target}" if info.target else ""
    lines = [HEADER, "", f"ascend-port {__version__}{target}: branch `{info.branch}` from {info.base}.", ""]
    if info.reviewed:
        lines += [
            f"Interactive review: {info.reviewed}. This file, the diffs and files.txt describe what was committed; "
            f"`{BEFORE_REVIEW}/` holds the assessment (md, json, sarif, csv) of the full port, before the review.",
            "",
        ]
    if info.committed:
        lines += ["## Commits", "", "| commit | subject |", "|---|---|"]
        lines += [f"| {sha} | {_cell(subject)} |" for sha, subject in info.commits]
    else:
        lines += ["The changes are staged on the branch, not committed (`--no-commit`)."]
    lines += ["", "## Files", "", "| file | diff | rewrites | TODOs |", "|---|---|---:|---:|"]
    for plan in plans:
        kinds = Counter(f.rewrites for f in plan.findings if f.applied)
        lines.append(
            f"| {_cell(plan.path)} | [{_cell(plan.path)}.diff]({plan.path}.diff) | {kinds[True]} | {kinds[False]} |"
        )
    lines += ["", "## Findings", "", "| location | rule | confidence | domain | message |", "|---|---|---|---|---|"]
    rows = sorted(
        ((p.path, _scanned(p, f), f) for p in plans for f in p.findings), key=lambda row: (*row[:2], row[2].rule.id)
    )
    for path, line, f in rows:
        lines.append(
            f"| {_cell(path)}:{line} | {f.rule.id} | {f.confidence.label} | "
            f"{TITLES[f.rule.id[:4]]} | {_cell(f.message)} |"
        )
    by_domain = Counter((f.rule.id[:4], f.rewrites) for _, _, f in rows)
    lines += ["", "## Per domain", "", "| domain | rewrites | TODOs |", "|---|---:|---:|"]
    lines += [
        f"| {TITLES[d]} | {by_domain[(d, True)]} | {by_domain[(d, False)]} |"
        for d in ORDER
        if by_domain[(d, True)] or by_domain[(d, False)]
    ]
    if info.left_out:
        lines += ["", "## Left out", ""] + [f"- {_cell(path)}: {why}" for path, why in info.left_out]
    if errors:
        lines += ["", "## Errors", ""] + [f"- {_cell(e.path)}: {_cell(e.error or '')}" for e in errors]
    return "\n".join(lines) + "\n"


def write_report(folder: Path, plans: list[FilePlan], errors: list[FileResult], info: RunInfo) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    summary_path = folder / "summary.md"
    # Diffs of an earlier run would be mistaken for this one's; remove them only from a folder this tool made.
    if summary_path.is_file() and summary_path.read_text("utf-8", errors="replace").startswith(HEADER):
        for stale in [*folder.rglob("*.diff"), *(folder / BEFORE_REVIEW).glob("*"), *_assessment_files(folder)]:
            stale.unlink()
    for plan in plans:
        target = folder / f"{plan.path}.diff"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(diff_bytes(plan.path, plan.old, plan.new, created=not plan.old))
    (folder / "files.txt").write_text("".join(f"{plan.path}\n" for plan in plans), "utf-8")
    summary_path.write_text(summary(plans, errors, info), "utf-8")


def _assessment_files(folder: Path) -> list[Path]:
    from ascend_port.reports import ASSESSMENT_FILES

    return [folder / name for name in ASSESSMENT_FILES.values() if (folder / name).is_file()]


def exclude_from_git(exclude_file: Path, root: Path, folder: Path) -> None:
    """Keep the report folder out of ``git status`` and commits through ``.git/info/exclude`` (never through the
    project's own .gitignore, which is the user's)."""
    try:
        relative = folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return  # outside the repository: nothing to exclude
    pattern = f"/{relative}/".encode()
    existing = exclude_file.read_bytes() if exclude_file.exists() else b""
    if pattern in existing.splitlines():
        return
    exclude_file.parent.mkdir(parents=True, exist_ok=True)
    separator = b"" if not existing or existing.endswith(b"\n") else b"\n"
    with exclude_file.open("ab") as stream:  # appended: the user's own lines are never rewritten
        stream.write(separator + b"# ascend-port report folder\n" + pattern + b"\n")
