"""`rules`, `explain` and the help of the commands that read files (issue 32): as ruff's `rule`/`linter` are — one line
a rule in a pipe, `--format json` for programs, `explain` by ID, name or prefix — and help texts written for each
command. Each test failed before the change it covers."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.rules.registry import all_rules

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False, env={"COLUMNS": "80"})


def test_rules_in_a_pipe_are_one_line_each() -> None:
    result = invoke("rules")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    for r in all_rules():
        mine = [line for line in lines if line.startswith(r.id + " ")]
        assert len(mine) == 1, (r.id, mine)
        assert r.summary in mine[0] and f"[{r.confidence.label}]" in mine[0]
    assert all(re.match(r"NPU\d{3} ", line) for line in lines), "a wrapped or decorated line"


def test_rules_as_json() -> None:
    result = invoke("rules", "--format", "json")
    listed = json.loads(result.stdout)
    assert [r["id"] for r in listed] == [r.id for r in all_rules()]
    first = listed[0]
    assert set(first) >= {"id", "name", "domain", "confidence", "summary", "informational", "retired"}


def test_rules_refuses_an_unknown_format() -> None:
    result = invoke("rules", "--format", "yaml")
    assert result.exit_code == 2 and "yaml" in result.output


def test_explain_by_name_is_explain_by_id() -> None:
    by_id = invoke("explain", "NPU101")
    by_name = invoke("explain", "cuda-method")
    assert by_name.exit_code == 0 and by_name.stdout == by_id.stdout


def test_explain_a_prefix_explains_each_of_its_rules() -> None:
    result = invoke("explain", "npu10")
    assert result.exit_code == 0
    ids = [r.id for r in all_rules() if r.id.startswith("NPU10")]
    assert len(ids) > 1 and all(rule_id in result.stdout for rule_id in ids)
    assert result.stdout.index(ids[0]) < result.stdout.index(ids[-1])


def test_explain_of_nothing_known_exits_2_and_says_how_to_list() -> None:
    result = invoke("explain", "no-such-rule")
    assert result.exit_code == 2 and "ascend-port rules" in result.output


def test_help_of_todos_and_check_api_says_what_they_read() -> None:
    for command in ("todos", "check-api", "scan"):
        text = " ".join(invoke(command, "--help").output.split())
        assert "Files or folders to port" not in text, command
    assert "Files or folders to search for TODO comments" in " ".join(invoke("todos", "--help").output.split())
    assert "Files or folders to check" in " ".join(invoke("check-api", "--help").output.split())
    assert "Files or folders to scan" in " ".join(invoke("scan", "--help").output.split())
