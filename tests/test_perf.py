"""The perf domain (NPU9xx) around its golden cases: informational findings never fail a scan and go with
`--ignore NPU9`; NPU902's launcher and host detection; the reports' performance section and its sources."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for
from ascend_port.reports.json_report import schema
from ascend_port.reports.performance import figures
from ascend_port.rules.perf.run_settings import _multi_host
from ascend_port.rules.registry import all_rules, get_rule

runner = CliRunner()

TRAIN = """\
import torch
from torch.utils.data import DataLoader

loader = DataLoader(dataset, batch_size=8, pin_memory=True)
for step, (x, y) in enumerate(loader):
    x = x.to(device)
    loss = model(x, y)
    loss.backward()
    optimizer.step()
    print(loss.item())
"""
RMS_NORM = """\
import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * x
"""
RUN = "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1\ntorchrun --nproc_per_node 2 train.py\n"


def port(name: str, text: str, selection: Selection | None = None):
    handler = handler_for(Path(name))
    assert handler is not None
    return handler.port(text.encode(), selection or Selection(), PortOptions())


def invoke(*args: str):
    return runner.invoke(app, [*args, "--jobs", "1", "--no-cache"], catch_exceptions=False)


def test_perf_findings_are_information_and_never_fail_a_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("train.py").write_text(TRAIN.replace("import torch\n", "import torch\nimport torch_npu\n"))
    result = invoke("scan", "train.py", "--format", "concise")
    assert "NPU900" in result.stdout and "NPU901" in result.stdout
    assert result.exit_code == 0, result.stdout  # (information only: nothing to do)


def test_ignore_npu9_turns_the_domain_off() -> None:
    everything = {f.rule.id for f in port("train.py", TRAIN).findings}
    assert {"NPU900", "NPU901"} <= everything
    without = port("train.py", TRAIN, Selection(ignore=("NPU9",)))
    assert not any(f.rule.id.startswith("NPU9") for f in without.findings)
    assert without.new_text == port("train.py", TRAIN).new_text  # (they never change Python)
    script = port("run.sh", RUN, Selection(ignore=("NPU9",)))
    assert script.new_text is not None and "TASK_QUEUE_ENABLE" not in script.new_text


def test_the_domain_is_listed_with_the_others() -> None:
    rules = {r.id: r for r in all_rules()}
    assert rules["NPU900"].domain == "perf" and rules["NPU900"].informational
    assert rules["NPU901"].informational and not rules["NPU902"].informational
    assert rules["NPU902"].rewrites  # (a rewrite of launch scripts, with a confidence of its own)


@pytest.mark.parametrize(
    ("args", "multi"),
    [
        (["torchrun", "--nnodes", "1", "train.py"], False),
        (["torchrun", "--nnodes=1", "train.py"], False),
        (["torchrun", "--nnodes=2", "train.py"], True),
        (["torchrun", "--nnodes=1:4", "train.py"], True),
        (["torchrun", "--nnodes", "$NNODES", "train.py"], True),
        (["deepspeed", "--hostfile", "hosts", "train.py"], True),
        (["deepspeed", "--num_nodes=1", "train.py"], False),
        (["accelerate", "launch", "--num_machines", "2", "train.py"], True),
        (["torchrun", "--nproc_per_node", "8", "train.py"], False),
    ],
)
def test_multi_host_launchers(args: list[str], multi: bool) -> None:
    assert _multi_host(args) is multi


def test_run_settings_name_what_the_script_sets_and_only_once() -> None:
    script = RUN.replace(
        "export CUDA_VISIBLE_DEVICES=0,1\n", "export CUDA_VISIBLE_DEVICES=0,1\nX=${TASK_QUEUE_ENABLE:-1}\n"
    )
    ported = port("run.sh", script).new_text
    assert ported is not None
    assert "export TASK_QUEUE_ENABLE" not in ported  # (read by the script: it has its own)
    assert ported.count("export CPU_AFFINITY_CONF=1") == 1
    assert ported.count("# PYTORCH_NPU_ALLOC_CONF:") == 1  # each setting under its comment
    assert "HCCL_CONNECT_TIMEOUT" not in ported  # (one host)
    assert port("run.sh", ported).new_text is None  # idempotent


def test_the_performance_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("train.py").write_text(TRAIN)
    Path("norm.py").write_text(RMS_NORM)
    Path("run.sh").write_text(RUN)
    document = json.loads(invoke("scan", ".", "--format", "json").stdout)
    jsonschema.validate(document, schema())
    section = document["performance"]
    assert {d["rule"]: d["count"] for d in section["done"]} == {"NPU420": 1, "NPU902": 1}
    left = {item["rule"]: item for item in section["left"]}
    assert left["NPU900"]["count"] == 1 and left["NPU901"]["count"] == 1
    assert left["NPU900"]["url"].startswith("https://") and left["NPU900"]["figure"] == "not measured"
    md = invoke("scan", ".", "--format", "md").stdout
    assert "## Performance" in md and "| NPU420 | rms-norm:" in md and "| NPU901 pinned-copy-blocking | 1 |" in md
    text = runner.invoke(app, ["scan", ".", "--format", "text", "--no-cache"], terminal_width=200).stdout
    assert "performance" in text and "NPU900 host-sync-in-step" in text


def test_figures_name_their_source() -> None:
    """A number is given only with the publication it comes from; every entry names a rule of the catalogue."""
    for rule_id, figure in figures().items():
        get_rule(rule_id)
        assert figure.effect, rule_id
        if not figure.figure.startswith("not measured"):
            assert figure.source and figure.url.startswith("https://"), rule_id


def test_a_project_that_captures_graphs_keeps_the_default_task_queue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """torch_npu refuses graph capture under TASK_QUEUE_ENABLE=2: a project whose Python captures graphs gets the
    other settings only."""
    monkeypatch.chdir(tmp_path)
    Path("run.sh").write_text(RUN)
    Path("train.py").write_text("import torch\n\ng = torch.cuda.CUDAGraph()\n")
    diff = invoke("apply", ".", "--dry-run", "--exit-zero").stdout
    assert "+export CPU_AFFINITY_CONF=1" in diff and "TASK_QUEUE_ENABLE" not in diff
    Path("train.py").write_text("import torch\n")
    assert "+export TASK_QUEUE_ENABLE=2" in invoke("apply", ".", "--dry-run", "--exit-zero").stdout
