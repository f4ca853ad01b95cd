"""Project facts read once (run/project_facts.py: the torch pin; the rules' project steps: the transformers bound) and
the target everywhere a user sees it (issue 17): NPU602 pins an explicit target, NPU506 names no torch.nn.RMSNorm
for an old torch, SARIF and the git report name the target, and check-api reads notebooks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.core import npu_api
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.git.summary import RunInfo, summary
from ascend_port.port.python import port_source
from ascend_port.run import config
from ascend_port.run.engine import project_options
from ascend_port.run.project_facts import ProjectFacts, facts

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


# --- the facts ------------------------------------------------------------------------------------------------


def test_one_reader_answers_the_torch_pin_and_the_transformers_bound(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["transformers>=4.46.1"]\n')
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\ntransformers==4.50.0\n")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "m.py").write_text("import torch\n")
    found = facts([tmp_path])
    assert found.folder == found.top == tmp_path.resolve()
    assert [p.name for p in found.pin_files] == ["requirements.txt", "pyproject.toml"]
    assert found.torch_pin is not None and found.torch_pin.where == "requirements.txt (torch==2.1.0)"
    assert _pin(found) == "4.46.1"
    assert project_options(found, PortOptions()) == PortOptions(transformers_pin="4.46.1", torch_floor="2.1.0")
    assert project_options(found, PortOptions(transformers_pin="4.40.0")).transformers_pin == "4.40.0"  # (the caller's)
    # From a file deep inside: the torch pin is the project's (the nearest above), the transformers bound comes
    # from the files at or below the folder given (the run's own files among them) and none is there.
    inner = facts([tmp_path / "src" / "pkg" / "m.py"])
    assert inner.folder == (tmp_path / "src" / "pkg").resolve() and inner.top == tmp_path.resolve()
    assert inner.torch_pin == found.torch_pin and _pin(inner) is None
    (tmp_path / "src" / "requirements-dev.txt").write_text("transformers~=4.40.0\n")
    assert _pin(facts([tmp_path / "src"], [tmp_path / "src" / "requirements-dev.txt"])) == "4.40.0"
    # A pin file added later is seen by the next read (the listing is cached per folder state).
    (tmp_path / "src" / "pkg" / "requirements.txt").write_text("torch==2.5.1\n")
    assert facts([tmp_path / "src" / "pkg"]).torch_pin.where == "requirements.txt (torch==2.5.1)"  # type: ignore[union-attr]


def test_no_pins_no_facts(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "m.py").write_text("import torch\n")
    found = facts([tmp_path])
    assert found.torch_pin is None and project_options(found, PortOptions()) == PortOptions()


def _pin(found: ProjectFacts) -> str | None:
    """The transformers bound the project steps read (rules/project/requirements.TransformersPin)."""
    return project_options(found, PortOptions()).transformers_pin


# --- NPU602: an explicit target is pinned --------------------------------------------------------------------


def _requirements_port(root: Path, *flags: str) -> str:
    return invoke("apply", str(root), "--dry-run", "--no-cache", "--exit-zero", *flags).output


def test_npu602_pins_an_explicit_target_and_reports_the_torch_pin_it_disagrees_with(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("torch==2.5.1\nnumpy\n")
    out = _requirements_port(tmp_path, "--torch-npu", "2.1.0")
    assert "+torch-npu==2.1.0.*  # added by ascend-port NPU602: the target you set, torch-npu 2.1.0.post17" in out
    report = tmp_path.parent / "report.json"
    invoke("scan", str(tmp_path), "--no-cache", "--torch-npu", "2.1.0", "--format", "json", "--output", str(report))
    messages = [f["message"] for f in json.loads(report.read_text())["findings"] if f["rule"] == "NPU602"]
    assert any(
        m.startswith("torch is pinned to 2.5.1, but the target torch-npu 2.1.0.post17 is built for torch 2.1.0")
        for m in messages
    )
    # The same target from [tool.ascend-port] is the user's choice too.
    (tmp_path / "pyproject.toml").write_text('[tool.ascend-port]\ntorch-npu = "2.1.0"\n')
    assert "+torch-npu==2.1.0.*" in _requirements_port(tmp_path)


@pytest.mark.parametrize("flags", [(), ("--torch-npu", "2.5.1")])
def test_npu602_follows_the_torch_pin_when_the_target_agrees_or_was_inferred(tmp_path: Path, flags) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("torch==2.5.1\n")
    out = _requirements_port(tmp_path, *flags)
    assert "+torch-npu==2.5.1.*  # added by ascend-port NPU602: torch-npu 2.5.1 pairs with torch 2.5.1" in out


def test_only_a_set_target_is_explicit(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\n")
    inferred = config.resolve([tmp_path]).run_config().options
    assert inferred.target == "2.1.0.post17" and not inferred.target_explicit
    chosen = config.resolve([tmp_path], {"torch-npu": "2.1.0"}).run_config().options
    assert chosen.target_explicit


# --- NPU506: no torch.nn.RMSNorm before torch 2.4 --------------------------------------------------------------

APEX = "import apex\nfrom apex.normalization import FusedRMSNorm\nn = FusedRMSNorm(8)\nm = apex.normalization.FusedRMSNorm(8)\n"


@pytest.mark.parametrize(("target", "rms_norm"), [("2.1", False), ("2.3.1", False), ("2.5.1", True), (None, True)])
def test_apex_rms_norm_way_follows_the_targets_torch(target: str | None, rms_norm: bool) -> None:
    options = PortOptions(target=npu_api.covered_release(target) if target else None)
    messages = [f.message for f in port_source(APEX, Selection(select=("NPU506",)), options).findings]
    assert len(messages) == 2 and all("torch_npu.npu_rms_norm" in m for m in messages)
    assert all(("use torch.nn.RMSNorm" in m) == rms_norm for m in messages)
    if not rms_norm:
        assert all("torch.nn.RMSNorm needs torch >= 2.4" in m for m in messages)


# --- the target in SARIF, the git report and commit messages ------------------------------------------------------


def test_sarif_names_the_target(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    for flags, expected in (((), npu_api.newest_release()), (("--torch-npu", "2.1.0"), "2.1.0.post17")):
        report = tmp_path.parent / "report.sarif"
        invoke("scan", str(tmp_path), "--no-cache", "--format", "sarif", "--output", str(report), *flags)
        assert json.loads(report.read_text())["runs"][0]["properties"] == {"torch_npu": expected}


def test_git_summary_and_commit_message_name_the_target() -> None:
    from ascend_port.git.workflow import commit_message

    head = summary([], [], RunInfo("main at 1a2b3c", "ascend-port/npu", target="2.1.0.post17")).splitlines()[2]
    assert "for torch_npu 2.1.0.post17: branch `ascend-port/npu` from main at 1a2b3c." in head
    assert "for torch_npu 2.1.0.post17;" in commit_message("NPU1", [], "2.1.0.post17")


# --- check-api reads notebooks -------------------------------------------------------------------------------


def _notebook(*cells: tuple[str, str]) -> str:
    body = [
        {"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True)}
        | ({"execution_count": None, "outputs": []} if kind == "code" else {})
        for kind, source in cells
    ]
    return json.dumps({"cells": body, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def test_check_api_reads_the_code_cells_of_notebooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = _notebook(
        ("code", "%matplotlib inline\nimport torch_npu\n"),
        ("markdown", "torch_npu.npu.mstx.range is mentioned here only\n"),
        ("code", "x = 1\ntorch_npu.npu.mstx.range('b')\n"),
        ("code", "def broken(:\n"),
    )
    (tmp_path / "nb.ipynb").write_text(text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "mstx.range('b')" in t)
    result = invoke("check-api", ".")
    assert result.exit_code == 1
    assert f"nb.ipynb:{line}  torch_npu.npu.mstx.range" in result.output and "nb.ipynb: 1 missing" in result.output
    (tmp_path / "nb.ipynb").write_text(_notebook(("code", "import torch_npu\ntorch_npu.npu.synchronize()\n")))
    assert invoke("check-api", ".").exit_code == 0
    (tmp_path / "nb.ipynb").write_text("{not json")
    assert invoke("check-api", ".").exit_code == 2
