"""Issue 20, "Reports that are fast and right": each format builds only what it shows (github reads and diffs
nothing), the dependency matrix caches what it parses, every edit carries its rule (multi-line statements, a TODO
that difflib glued to the rewrite above it), one line convention and one set of domain names in every output, the
risk matrix shows the project's own code, distribution names in the dependency matrix, and the Mermaid charts and
per-directory roll-up of the md assessment."""

from __future__ import annotations

import csv
import io
import json
import os
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.core import library_support
from ascend_port.git import domains as git_domains
from ascend_port.reports import dependencies as deps
from ascend_port.reports import model, packages, render
from ascend_port.reports.lines import old_line
from ascend_port.reports.text import concise_lines, print_text
from ascend_port.run.engine import RunConfig, run

runner = CliRunner()

# A rewrite followed by a TODO for the next line: difflib makes one run of the two ("replace 1 line by 2"), and the
# TODO's finding sits on the line after that run (megatron/core/utils.py had 303 such rule-less edits).
GLUED = """\
import torch


def stats():
    temp = torch.cuda.temperature()
    util = torch.cuda.utilization()
    clock = torch.cuda.clock_rate()
    torch.cuda.synchronize()
    return temp, util, clock
"""
# A multi-line statement rewritten, and a module that gets `import torch_npu` after a docstring.
MULTILINE = '''\
"""Doc."""
import torch

x = torch.ones(
    2,
    device="cuda",
)
y = x.cuda(
    non_blocking=True,
)
'''
# A class's own cuda() (NPU113): the alias goes after the method, away from the `def` line and the rewrite beside it.
OWN_CUDA = """\
class Batch:
    def cuda(self):
        self.x = self.x.cuda()
        self.count = 1
        self.name = "batch"
        return self


def move(batches):
    return [b.cuda() for b in batches]
"""
IMPORTS = """\
import cv2
import _pytest
import flash_attn_interface
import liger_kernel
import torch
from _private_ext import op
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "glued.py").write_text(GLUED)
    (tmp_path / "pkg" / "multiline.py").write_text(MULTILINE)
    (tmp_path / "pkg" / "own_cuda.py").write_text(OWN_CUDA)
    (tmp_path / "imports.py").write_text(IMPORTS)
    return tmp_path


def _result():
    return run([Path(".")], RunConfig(jobs=1))


# --- fast: only what a format needs ----------------------------------------------------------------------------


def test_github_reads_and_diffs_nothing(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _result()
    expected = render(result, "github")

    def forbidden(*args, **kwargs):
        raise AssertionError("the github annotations must not read files, diff them or build the matrix")

    monkeypatch.setattr(model, "file_edits", forbidden)
    monkeypatch.setattr(model, "_old_bytes", forbidden)
    monkeypatch.setattr(model, "find_dependencies", forbidden)
    assert render(result, "github") == expected
    with pytest.raises(AssertionError):
        render(result, "csv")


def test_csv_and_sarif_build_no_dependency_matrix(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _result()

    def forbidden(*args, **kwargs):
        raise AssertionError("only md and json show the dependency matrix")

    monkeypatch.setattr(model, "find_dependencies", forbidden)
    for fmt in ("csv", "sarif"):
        assert render(result, fmt)


def test_the_imports_are_parsed_once_and_cached(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _result()
    first = render(result, "md")
    assert list((Path(os.environ["XDG_CACHE_HOME"]) / "ascend-port" / "reports").glob("imports-*.json"))

    def forbidden(text: str) -> set[str]:
        raise AssertionError("a warm report parses no module")

    monkeypatch.setattr(deps, "_top_level_imports", forbidden)
    assert render(result, "md") == first


def test_a_garbled_import_cache_is_a_miss(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / f"imports-{deps.ImportCache.VERSION}.json").write_text("{not json")
    cache = deps.ImportCache(folder)
    assert cache.imports(b"import numpy\n") == {"numpy"}
    cache.save()
    assert deps.ImportCache(folder).entries  # rewritten whole


def test_imports_in_nested_blocks_and_not_in_strings() -> None:
    text = (
        "try:\n    import apex\nexcept ImportError:\n    import numpy\n"
        "class A:\n    def f(self):\n        if x:\n            from scipy import linalg\n"
        "match y:\n    case 1:\n        import yaml\n"
        "DOC = '''\nimport not_an_import\n'''\nfrom . import sibling\n"
    )
    assert deps._top_level_imports(text) == {"apex", "numpy", "scipy", "yaml"}


# --- right: every edit has its rule, one line convention -------------------------------------------------------


def test_every_edit_carries_its_rule(project: Path) -> None:
    result = _result()
    rows = list(csv.reader(io.StringIO(render(result, "csv"))))[1:]
    assert rows and all(row[5] for row in rows), [row for row in rows if not row[5]]
    document = json.loads(render(result, "json"))
    assert all(edit["rules"] for edit in document["edits"])
    # The TODO glued to the rewrite above it is an edit of its own, with its own rule.
    glued = [e for e in document["edits"] if e["path"].endswith("glued.py")]
    todo = next(e for e in glued if "clock_rate" in e["new_text"] and "TODO" in e["new_text"])
    assert todo["rules"] == ["NPU107"] and todo["operation"] == "INSERT" and todo["start_line"] == 7
    alias = next(e for e in document["edits"] if "npu = cuda" in e["new_text"])
    assert alias["rules"] == ["NPU113"] and alias["operation"] == "INSERT"
    sarif = json.loads(render(result, "sarif"))
    for res in sarif["runs"][0]["results"]:
        for fix in res.get("fixes", []):
            assert res["ruleId"] in fix["description"]["text"]


def test_one_line_number_for_a_finding_in_every_format(project: Path) -> None:
    result = _result()
    expected = {(p.path, p.line, p.rule.id) for p in model.build(result).placed}
    assert ("pkg/multiline.py", 2, "NPU100") in expected  # the line `import torch_npu` goes after
    document = json.loads(render(result, "json"))
    assert {(f["path"], f["line"], f["rule"]) for f in document["findings"]} == expected
    github = {
        (m["file"], int(m["line"]), m["rule"])
        for m in re.finditer(
            r"file=(?P<file>[^,]+),line=(?P<line>\d+),title=ascend-port (?P<rule>NPU\d+)", render(result, "github")
        )
    }
    assert github == expected
    sarif = json.loads(render(result, "sarif"))
    assert {
        (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["ruleId"],
        )
        for r in sarif["runs"][0]["results"]
    } == expected
    concise = {
        (m["file"], int(m["line"]), m["rule"])
        for m in (re.match(r"(?P<file>[^:]+):(?P<line>\d+): (?P<rule>NPU\d+)", line) for line in concise_lines(result))
        if m
    }
    assert concise == expected
    # and the CSV's Start Line (issue 32: it gave the first line of the edit, NPU100's the line after the import)
    rows = list(csv.DictReader(io.StringIO(render(result, "csv"))))
    assert {(r["File"], int(r["Start Line"]), r["Rule"]) for r in rows if r["Rule"]} == expected


def test_one_confidence_for_a_finding_in_every_format(project: Path) -> None:
    """NPU407 was `[info]` in the concise lines and `high` in the others (issue 32): its confidence everywhere, and
    information said as such beside it."""
    (project / "sdpa.py").write_text(
        "import torch.nn.functional as F\n\nout = F.scaled_dot_product_attention(q, k, v)\n"
    )
    result = _result()
    document = json.loads(render(result, "json"))
    expected = {(f["path"], f["line"], f["rule"], f["confidence"]) for f in document["findings"]}
    assert ("sdpa.py", 3, "NPU407", "high") in expected
    rows = list(csv.DictReader(io.StringIO(render(result, "csv"))))
    assert {(r["File"], int(r["Start Line"]), r["Rule"], r["Confidence"]) for r in rows if r["Rule"]} == expected
    pattern = r"(?P<file>[^:]+):(?P<line>\d+): (?P<rule>NPU\d+) \[(?P<confidence>\w+)\] (?P<message>.*)"
    concise = [m for m in (re.match(pattern, line) for line in concise_lines(result)) if m]
    assert {(m["file"], int(m["line"]), m["rule"], m["confidence"]) for m in concise} == expected
    assert [m["message"] for m in concise if m["rule"] == "NPU407"][0].startswith("info: ")


def test_old_line_reads_the_diff() -> None:
    diff = b"--- a/f.py\n+++ b/f.py\n@@ -1,3 +1,4 @@\n a\n+b\n c\n-d\n+e\n@@ -10,0 +11,1 @@\n+z\n"
    assert old_line(diff, 1) == 1  # context
    assert old_line(diff, 2) == 1  # added after old line 1
    assert old_line(diff, 3) == 2
    assert old_line(diff, 4) == 3  # `e` replaces `d`: on the line it replaces
    assert old_line(diff, 8) == 7  # between hunks: the offset of the first (+1 line)
    assert old_line(diff, 11) == 10  # inserted after old line 10


# --- one set of domain names -----------------------------------------------------------------------------------


def test_domain_names_are_the_commit_messages_names(project: Path) -> None:
    assert model.DOMAIN_TITLES == git_domains.TITLES
    result = _result()
    document = json.loads(render(result, "json"))
    names = set(git_domains.TITLES.values())
    assert {d["title"] for d in document["domains"]} == names
    assert {f["domain"] for f in document["findings"]} <= names
    sarif = json.loads(render(result, "sarif"))
    assert all(r["properties"]["tags"][2] in names for r in sarif["runs"][0]["tool"]["driver"]["rules"])
    md = render(result, "md")
    assert "### device layer (NPU1xx)" in md
    buffer = io.StringIO()
    print_text(result, Console(file=buffer, width=200))
    assert "device layer" in buffer.getvalue()


# --- the dependency matrix -------------------------------------------------------------------------------------


def test_dependency_matrix_uses_distribution_names(project: Path) -> None:
    document = json.loads(render(_result(), "json"))
    rows = {d["package"]: d for d in document["dependencies"]}
    assert "opencv-python" in rows and "cv2" not in rows
    assert "pytest" in rows and not any(name.startswith("_") for name in rows)
    fa3 = rows["flash-attn-3"]
    assert fa3["status"] == packages.REPLACE and "npu_fusion_attention" in fa3["replacement"]
    assert rows["liger-kernel"]["status"] == library_support.library("liger-kernel").status


@pytest.mark.parametrize("row", library_support.libraries(), ids=lambda row: row.name)
def test_every_library_of_the_support_table_is_in_the_matrix(row: library_support.Library) -> None:
    for module in row.imports:
        name = packages.distribution_for_import(module)
        package = packages.lookup(name or "")
        assert package is not None and package.status == row.status, module


def test_no_unsupported_row_says_something_replaces_it() -> None:
    for name in ("flash-attn-3", "flash-attn-interface", "flash-attn", "xformers"):
        package = packages.lookup(name)
        assert package is not None
        assert not (package.status == packages.UNSUPPORTED and "replaces it" in package.note), name


# --- the md assessment: charts, roll-up, risk matrix -------------------------------------------------------------


def test_md_has_mermaid_charts_and_a_directory_rollup(project: Path) -> None:
    md = render(_result(), "md")
    charts = re.findall(r"```mermaid\n(.*?)```", md, re.S)
    assert any(c.startswith("pie showData\n    title Estimated effort:") for c in charts)
    bars = next(c for c in charts if c.startswith("xychart-beta"))
    assert '"device layer"' in bars and bars.count("    bar [") == 3
    rollup = md.split("## Per directory", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in rollup.splitlines() if line.startswith("| ") and not line.startswith("| directory")]
    manual = [int(row.split("|")[3]) for row in rows]
    assert manual == sorted(manual, reverse=True) and rows[0].startswith("| pkg |")


def test_risk_matrix_shows_the_project_code(project: Path) -> None:
    md = render(_result(), "md")
    risks = md.split("## Risk matrix", 1)[1]
    assert (
        "| NPU107 torch-cuda-unsupported | pkg/glued.py:5 | `temp = torch.cuda.temperature()` | manual (TODO) |"
        in risks
    )
    assert "| NPU101 cuda-method | pkg/multiline.py:8 | `y = x.cuda(` | `y = x.npu(` |" in risks


def test_cli_scan_github_matches_render(project: Path) -> None:
    out = runner.invoke(app, ["scan", ".", "--jobs", "1", "--format", "github"]).stdout
    assert out == render(_result(), "github")


def test_a_rewrite_is_not_given_the_import_inserted_above_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "app.py").write_text('import torch\nDEVICE = "cuda"\nx = t.cuda()\n')
    rows = list(csv.reader(io.StringIO(render(_result(), "csv"))))[1:]
    by_rule = {row[5]: row for row in rows}
    assert by_rule["NPU100"][3] == "INSERT" and by_rule["NPU104"][3] == "MODIFY" and all(row[5] for row in rows)


def test_md_counts_agree_with_their_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ "1 rewrites" (issue 32): every count of the md assessment in the number its value takes."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text("import torch\nx = torch.cuda.graph_pool_handle()\n")
    text = render(run([Path(".")], RunConfig(jobs=1)), "md")
    assert re.search(r"\b1 rewrites\b|\b1 files\b|\b1 items\b|\b1 references\b", text) is None, text
    assert "1 file checked" in text and "automatic rewrite" in text
