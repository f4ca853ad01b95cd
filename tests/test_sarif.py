"""``scan --format sarif``: valid against the official SARIF 2.1.0 schema (tests/data, see its README), one rule per
NPU ID, results on the right lines, and fixes whose replacements turn the scanned files into the ported ones."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.rules.registry import all_rules
from ascend_port.run.engine import RunConfig, run

runner = CliRunner()
SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text("utf-8"))

TRAIN = "import torch\n\nx = torch.ones(2).cuda()\nused = torch.cuda.memory_usage()\nflag = x.is_cuda\n"
# CRLF line ends, a non-ASCII character and no newline at the end: the end of the last replacement is a column.
CRLF = "import torch\r\ns = 'é'\r\ny = torch.zeros(1).cuda()".encode()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "crlf.py").write_bytes(CRLF)
    (tmp_path / "clean.py").write_text("import torch\n")
    return tmp_path


def sarif(*args: str) -> dict:
    result = runner.invoke(app, ["scan", ".", "--format", "sarif", "--jobs", "1", *args], catch_exceptions=False)
    assert result.exit_code in (1, 2), result.output
    return json.loads(result.stdout)


def test_valid_sarif_2_1_0(project: Path) -> None:
    log = sarif()
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    errors = sorted(jsonschema.Draft7Validator(SCHEMA).iter_errors(log), key=str)
    assert not errors, errors[0]
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    # The validator does catch a broken log (a result without a message).
    del log["runs"][0]["results"][0]["message"]
    assert list(jsonschema.Draft7Validator(SCHEMA).iter_errors(log))


def test_one_rule_per_npu_id_with_docs_level_and_precision(project: Path) -> None:
    rules = sarif()["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.id for r in all_rules() if not r.retired]
    by_id = {r["id"]: r for r in rules}
    npu101 = by_id["NPU101"]
    assert npu101["name"] == "cuda-method"
    assert npu101["shortDescription"]["text"].startswith("`.cuda(...)` -> `.npu(...)`")
    assert npu101["fullDescription"]["text"] and npu101["help"]["text"]
    assert "**Before:**" in npu101["help"]["markdown"] and "```" in npu101["help"]["markdown"]
    assert npu101["defaultConfiguration"]["level"] == "warning"
    assert npu101["properties"]["precision"] == "high"
    assert by_id["NPU107"]["defaultConfiguration"]["level"] == "error"  # low: manual work
    assert by_id["NPU107"]["properties"]["precision"] == "low"


def test_results_point_at_the_scanned_lines(project: Path) -> None:
    run_ = sarif()["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    seen = {}
    for result in run_["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        seen[(location["artifactLocation"]["uri"], result["ruleId"])] = (location["region"]["startLine"], result)
    assert seen[("train.py", "NPU101")][0] == 3
    assert seen[("train.py", "NPU100")][0] == 1  # the `import torch` the new import goes after
    line, todo = seen[("train.py", "NPU107")]
    assert line == 4 and todo["level"] == "error" and "fixes" not in todo  # a TODO is not a fix
    assert run_["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"


def _offset(lines: list[str], line: int, column: int) -> int:
    return sum(len(text) for text in lines[: line - 1]) + column - 1


def _apply(text: str, replacements: list[dict]) -> str:
    """Apply SARIF replacements (line/column regions, code points) from the end of the text backwards."""
    lines = text.split("\n")
    lines = [part + "\n" for part in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    spans = []
    for r in replacements:
        region = r["deletedRegion"]
        spans.append(
            (
                _offset(lines, region["startLine"], region["startColumn"]),
                _offset(lines, region["endLine"], region["endColumn"]),
                r["insertedContent"]["text"],
            )
        )
    for start, end, new in sorted(set(spans), reverse=True):
        text = text[:start] + new + text[end:]
    return text


def test_fixes_turn_the_scanned_files_into_the_port(project: Path) -> None:
    log = sarif()
    ported = {f.path: f.new_bytes for f in run([Path(".")], RunConfig(jobs=1)).changed}
    fixes: dict[str, list[dict]] = {}
    for result in log["runs"][0]["results"]:
        for fix in result.get("fixes", []):
            for change in fix["artifactChanges"]:
                fixes.setdefault(change["artifactLocation"]["uri"], []).extend(change["replacements"])
    # crlf.py has rewrites only: its fixes together give the port byte for byte, CRLF and last line included.
    assert _apply(CRLF.decode(), fixes["crlf.py"]).encode() == ported["crlf.py"]
    # train.py also has a TODO (not a fix): every line but the TODO comment comes from the fixes.
    fixed = _apply(TRAIN, fixes["train.py"])
    expected = "".join(
        line for line in ported["train.py"].decode().splitlines(keepends=True) if "TODO(ascend-port)" not in line
    )
    assert fixed == expected
    # Each fix alone is the rewrite of its own finding: the .cuda() fix does not carry the NPU107 TODO.
    cuda_fix = next(
        r["fixes"][0]
        for r in log["runs"][0]["results"]
        if r["ruleId"] == "NPU101" and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "train.py"
    )
    inserted = cuda_fix["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"]
    assert inserted == "x = torch.ones(2).npu()\n"


def test_unreadable_file_is_a_tool_notification(project: Path) -> None:
    (project / "broken.py").write_text("print 'cuda'\nx = y.cuda()\n")
    invocation = sarif()["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert "broken.py" in invocation["toolExecutionNotifications"][0]["message"]["text"]
