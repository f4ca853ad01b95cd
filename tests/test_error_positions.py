"""Errors point where Python points (issue 32): a parse error at the bracket Python names, not at the line after it;
a decode error at a line and column, not a byte offset."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from ascend_port.cli import app


def scan_errors(folder: Path) -> list[str]:
    result = CliRunner().invoke(app, ["scan", str(folder)], catch_exceptions=False, env={"COLUMNS": "300"})
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


def test_an_unclosed_bracket_is_reported_where_python_reports_it(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("import torch\nx = foo(1,\n     2\ny = torch.ones(1).cuda()\n", "utf-8")
    (error,) = scan_errors(tmp_path)
    assert error == f"error: {tmp_path / 'bad.py'}: cannot parse: '(' was never closed (line 2, column 8)"


def test_an_undecodable_byte_is_reported_at_its_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "dec.py").write_bytes(b'import torch\nx = "caf\xe9"\ny = torch.ones(1).cuda()\n')
    (error,) = scan_errors(tmp_path)
    assert error == f"error: {tmp_path / 'dec.py'}: cannot decode line 2, column 9: byte 0xe9 is not utf-8"
