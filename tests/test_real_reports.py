"""Issue 20's report defects on the real code they were found in: Megatron-Core 0.12.0 (303 edits without a rule
in the CSV: a rewrite and the TODO of the next line glued into one difflib run) and transformers 5.23.0 (183 of
1,208 CSV rows without a rule: statements over several lines, reported at their first line and changed further
down), ported as an NPU-only fork would be (rewrites, not reports). The pinned distributions are downloaded once
into .cache/corpora (benchmarks/corpora.py), never built or installed; whole-tree timings are in
benchmarks/bench_reports.py."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from ascend_port.core.options import PortOptions
from ascend_port.reports import render
from ascend_port.reports.model import build
from ascend_port.run.engine import RunConfig, RunResult, run

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

pytestmark = pytest.mark.slow
NPU_ONLY = PortOptions(other_devices="drop")
FILES = {
    ("megatron-core", "0.12.0", True): ("megatron_core-0.12.0/megatron/core/utils.py",),
    (*corpora.TRANSFORMERS, False): (
        "transformers/modeling_utils.py",
        "transformers/generation/continuous_batching/utils.py",
        "transformers/integrations/flash_attention.py",
    ),
}


@cache
def ported() -> RunResult:
    paths = []
    for (name, version, sdist), files in FILES.items():
        try:
            root = corpora.fetch(name, version, sdist=sdist)
        except (subprocess.CalledProcessError, OSError) as error:
            pytest.skip(f"cannot download {name} {version}: {error}")
        paths += [root / f for f in files]
    return run(paths, RunConfig(jobs=1, options=NPU_ONLY))


def test_every_csv_row_and_edit_has_its_rule() -> None:
    result = ported()
    rows = list(csv.reader(io.StringIO(render(result, "csv"))))[1:]
    assert len(rows) > 50
    assert [row for row in rows if not row[5]] == []
    report = build(result)
    assert report.edits and all(edit.findings for edit in report.edits)
    # Each TODO comment is carried by an edit holding that very comment.
    for p in report.placed:
        if p.finding.kind == "todo" and p.edit is not None:
            assert f"{p.rule.id} [{p.rule.confidence.label}]" in p.edit.new_text, (p.path, p.line)


def test_megatron_clock_rate_todo_is_its_own_edit() -> None:
    document = json.loads(render(ported(), "json"))
    todo = [e for e in document["edits"] if "torch.cuda.clock_rate has no" in e["new_text"]]
    assert todo and all(e["rules"] == ["NPU107"] and e["operation"] == "INSERT" for e in todo)


def test_github_and_csv_agree_on_lines() -> None:
    result = ported()
    report = build(result)
    quick = build(result, edits=False)  # what --format github builds
    assert [(p.path, p.line, p.rule.id) for p in quick.placed] == [(p.path, p.line, p.rule.id) for p in report.placed]
