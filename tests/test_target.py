"""Issue 17: the port knows its target torch-npu release (``--torch-npu``, ``[tool.ascend-port] torch-npu``, else the
release for the project's own torch pin, else the newest) and emits only what that release has; ``check-api`` runs
the final check alone."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.core import npu_api
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.formats.requirement import parse_requirement
from ascend_port.port.python import port_source
from ascend_port.python.api_names import api_names
from ascend_port.run import config

runner = CliRunner()

TRAIN = """\
import torch
from apex.normalization import FusedRMSNorm


class Block(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = FusedRMSNorm(dim, elementwise_affine=True)


def train_step(model, batch, step):
    torch.cuda.nvtx.range_push("forward")
    with torch.cuda.nvtx.range("step {}", step):
        loss = model(batch)
    torch.cuda.nvtx.mark("loss")
    torch.cuda.nvtx.range_pop()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        loss.backward()
    free, total = torch.cuda.mem_get_info()
    torch.cuda.reset_peak_memory_stats()
    peak = torch.cuda.max_memory_allocated()
    print(torch.cuda.memory_summary(), torch.cuda.get_per_process_memory_fraction())
    torch.cuda.ipc_collect()
    torch.cuda.empty_cache()
    return loss, peak, free, total, prof
"""


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def _project(root: Path, torch_pin: str) -> Path:
    root.mkdir()
    (root / "requirements.txt").write_text(f"torch=={torch_pin}\nnumpy\n")
    (root / "train.py").write_text(TRAIN)
    return root


def _names(text: str) -> list[str]:
    return [n.name for n in api_names(ast.parse(text))]


@pytest.mark.parametrize(("pin", "release"), [("2.1.0", "2.1.0.post17"), ("2.5.1", "2.5.1.post1")])
def test_a_pinned_project_ports_to_names_its_release_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pin: str, release: str
) -> None:
    project = _project(tmp_path / "proj", pin)
    monkeypatch.chdir(project)
    shown = invoke("config", ".")
    assert f'torch-npu = "{release}"  # inferred from requirements.txt (torch=={pin})' in shown.output
    assert invoke("apply", ".", "--no-git", "--no-cache").exit_code == 0
    ported = (project / "train.py").read_text()
    names = _names(ported)
    assert "torch_npu.profiler.profile" in names and "torch.npu.max_memory_allocated" in names
    missing = [n for n in names if npu_api.name_status(n, release, strict=True) is False]
    assert missing == [], missing
    # range_push/range_pop the release lacks run on its range_start/range_end through a stack written once
    assert '_npu_range_push("forward")' in ported and "_npu_range_pop()" in ported
    assert ported.count("def _npu_range_push(message):") == 1 and 'nvtx.range_push("forward")' not in ported
    # what the release lacks otherwise is left as it was, with a TODO naming where it exists
    assert "torch.cuda.get_per_process_memory_fraction()" in ported
    assert "_NpuRMSNorm(dim, elementwise_affine=True, eps=1e-5)" in ported
    if pin < "2.4":  # no torch.nn.RMSNorm: a module of its own on torch_npu.npu_rms_norm
        assert "class _NpuRMSNorm(torch.nn.Module):" in ported and "torch_npu.npu_rms_norm(" in ported
    else:
        assert "class _NpuRMSNorm(torch.nn.RMSNorm):" in ported
    assert "torch_npu.npu.mstx.mark(" in ported  # in every release
    # the pin written exists in the published release table
    pins = [parse_requirement(line.split("#")[0]) for line in (project / "requirements.txt").read_text().splitlines()]
    torch_npu = next(r for r in pins if r is not None and r.key == "torch-npu")
    assert torch_npu.specifier == f"=={pin}.*"
    assert any(r.version.startswith(f"{pin}.") or r.version == pin for r in npu_api.published_releases())
    assert invoke("check-api", ".").exit_code == 0
    # ported again: nothing changes (the TODOs are not added twice)
    assert invoke("apply", ".", "--check", "--no-cache").exit_code == 0


def test_the_newest_release_gets_the_new_apis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path / "proj", "2.7.1")
    monkeypatch.chdir(project)
    assert invoke("apply", ".", "--no-git", "--no-cache").exit_code == 0
    ported = (project / "train.py").read_text()
    assert 'torch_npu.npu.mstx.range_push("forward")' in ported
    assert 'torch_npu.npu.mstx.annotate("step {}".format(step))' in ported
    assert "_NpuRMSNorm(dim, elementwise_affine=True, eps=1e-5)" in ported
    assert "torch.npu.ipc_collect()" in ported  # (2.7.1 has it, 2.5.1 has not)
    assert [n for n in _names(ported) if npu_api.name_status(n, "2.7.1.post11", strict=True) is False] == []


def _port(text: str, target: str | None) -> str:
    options = PortOptions(target=target)
    outcome = port_source(text, Selection(ignore=("NPU100",)), options)
    assert outcome.new_text is not None
    return outcome.new_text


def test_nvtx_follows_the_target() -> None:
    source = 'import torch\ntorch.cuda.nvtx.range_push("a")\ntorch.cuda.nvtx.range_start("b")\n'
    assert _port(source, "2.7.1.post11") == (
        'import torch\nimport torch_npu\ntorch_npu.npu.mstx.range_push("a")\ntorch_npu.npu.mstx.range_start("b")\n'
    )
    old = _port(source, "2.2.0.post2")  # neither range_push nor range_start
    assert old.count("TODO(ascend-port): NPU700") == 2 and 'torch.cuda.nvtx.range_start("b")' in old
    assert "range_start(message) and mstx.range_end(range_id)" in old  # the equivalent the release has
    assert "mstx.mark(message)" in old  # range_start's: 2.2.0 has only mark
    assert "(in torch_npu 2.7.1.post11, 2.9.0.post9, 2.10.0.post7-2.14.0)" in old

    # 2.5.1 has range_start/range_end but no range_push: a stack of range ids, written once, used as NVTX's stack
    between = _port(source + "torch.cuda.nvtx.range_pop()\n", "2.5.1.post1")
    assert '_npu_range_push("a")' in between and "_npu_range_pop()" in between and "TODO" not in between
    assert 'torch_npu.npu.mstx.range_start("b")' in between and "def _npu_range_pop():" in between


def test_the_range_stack_runs_like_nvtx() -> None:
    """The written helpers, run against a stand-in mstx that hands out range ids: the depths NVTX returns, and every
    range ended once, innermost first."""
    ported = _port('import torch\nimport torch_npu\ntorch.cuda.nvtx.range_push("a")\n', "2.5.1.post1")
    helpers = ported[ported.index("_NPU_MSTX_RANGES = []") : ported.index('_npu_range_push("a")')]
    started, ended = [], []
    mstx = type(
        "mstx",
        (),
        {
            "range_start": staticmethod(lambda m: started.append(m) or len(started)),
            "range_end": staticmethod(ended.append),
        },
    )
    namespace = {"torch_npu": type("torch_npu", (), {"npu": type("npu", (), {"mstx": mstx})})}
    exec(helpers, namespace)
    push, pop = namespace["_npu_range_push"], namespace["_npu_range_pop"]
    assert [push("outer"), push("inner"), pop(), pop(), pop()] == [0, 1, 1, 0, -1]
    assert started == ["outer", "inner"] and ended == [2, 1]


def test_apex_rms_norm_needs_torch_2_4() -> None:
    source = "import torch\nfrom apex.normalization import FusedRMSNorm\n\nnorm = FusedRMSNorm(8)\nln = torch.ones(1)\n"
    new = _port(source, "2.4.0.post4")
    assert "norm = _NpuRMSNorm(8, eps=1e-5)" in new and "class _NpuRMSNorm(torch.nn.RMSNorm):" in new
    old = _port(source, "2.3.1.post6")  # torch 2.3: no torch.nn.RMSNorm, the module is torch_npu.npu_rms_norm's
    assert "norm = _NpuRMSNorm(8, eps=1e-5)" in old and "class _NpuRMSNorm(torch.nn.Module):" in old
    assert "torch_npu.npu_rms_norm(" in old and "import torch_npu" in old and "from apex" not in old


def test_torch_cuda_names_follow_the_target() -> None:
    source = "import torch\ntorch.cuda.ipc_collect()\n"
    assert _port(source, "2.1.0.post17") == "import torch\ntorch.npu.ipc_collect()\n"
    assert _port(source, None) == "import torch\ntorch.npu.ipc_collect()\n"  # default: the newest
    old = _port(source, "2.5.1.post1")
    assert "torch.cuda.ipc_collect()" in old
    assert "(torch_npu 2.5.1.post1; in torch_npu 2.1.0.post17, 2.6.0.post5-2.14.0)" in old


def test_config_and_flags_name_the_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert f'torch-npu = "{npu_api.newest_release()}"  # default' in invoke("config", ".").output
    assert 'torch-npu = "2.5.1.post1"  # command line' in invoke("config", ".", "--torch-npu", "2.5.1").output
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.ascend-port]\ntorch-npu = "2.9"\n')
    assert 'torch-npu = "2.9.1"  # ' in invoke("config", ".").output
    (tmp_path / "pyproject.toml").write_text('[tool.ascend-port]\ntorch-npu = "1.8.1"\n')
    result = invoke("config", ".")
    assert result.exit_code == 2 and "is not a known release" in result.output
    assert invoke("scan", ".", "--torch-npu", "9.9").exit_code == 2


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch==2.3.1+cu121", "numpy"]\n'}, "2.3.1.post6"),
        ({"setup.py": 'from setuptools import setup\nsetup(install_requires=["torch==2.4.0"])\n'}, "2.4.0.post4"),
        ({"requirements/base.txt": "torch == 2.2.0\n"}, "2.2.0.post2"),
        ({"requirements.txt": "torch==2.7.0\n"}, "2.6.0.post5"),  # no torch-npu for 2.7.0: the nearest older pair
        ({"requirements.txt": "torch>=2.1\n"}, None),  # not a pin: the newest
    ],
)
def test_the_target_is_inferred_from_the_torch_pin(tmp_path: Path, files: dict[str, str], expected: str | None) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    settings = config.resolve([tmp_path])
    assert settings.torch_npu == expected
    assert settings.target == expected or npu_api.newest_release()
    assert settings.origins["torch-npu"] == (config.INFERRED if expected else config.DEFAULT)
    if expected:
        assert settings.run_config().options.target == expected  # (and so in the cache key)


def test_check_api_flags_a_missing_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.py").write_text("import torch\nimport torch_npu\ntorch.npu.synchronize()\n")
    assert invoke("check-api", ".").exit_code == 0
    assert invoke("check-api", ".", "--torch-npu", "2.1.0").exit_code == 0
    (tmp_path / "new.py").write_text(
        "import torch_npu\nfrom torch_npu.npu import mstx\n\nmstx.range_push('a')\ntorch_npu.npu.mstx.range('b')\n"
        "torch_npu.npu.default_generators\n"
    )
    result = invoke("check-api", ".", "--torch-npu", "2.5.1")
    assert result.exit_code == 1
    assert "new.py:4  torch_npu.npu.mstx.range_push  torch_npu.npu.mstx.range_push is missing from torch_npu " in (
        result.output
    )
    assert (
        "new.py:5  torch_npu.npu.mstx.range" in result.output and "(in no release ascend-port knows)" in result.output
    )
    assert "default_generators" not in result.output  # (public, in no __all__: the inventory cannot tell)
    assert "new.py: 2 missing" in result.output
    newest = invoke("check-api", ".")
    assert newest.exit_code == 1 and "range_push" not in newest.output and "mstx.range " in newest.output
    assert invoke("check-api", ".", "--exit-zero").exit_code == 0
    (tmp_path / "bad.py").write_text("import torch_npu\ndef (:\n")
    assert invoke("check-api", ".").exit_code == 2


def test_the_cache_keeps_targets_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.py").write_text("import torch\ntorch.cuda.ipc_collect()\n")
    for target, expected in (("2.5.1", "torch.cuda.ipc_collect"), ("2.6.0", "torch.npu.ipc_collect")) * 2:
        result = invoke("apply", ".", "--dry-run", "--torch-npu", target)
        assert f"+{expected}()" in result.output or "+# TODO(ascend-port): NPU107" in result.output
        assert (expected == "torch.npu.ipc_collect") == ("+torch.npu.ipc_collect()" in result.output)


def test_a_listing_flags_only_what_came_later() -> None:
    """__all__ lists say what a module exports: a name that left one may still be there; one that came later is not."""
    assert npu_api.name_status("torch.npu.set_op_timeout_ms", "2.5.1.post1") is False  # first in 2.6.0
    assert npu_api.name_status("torch.npu.utils.device_count", "2.14.0") is None  # left utils.__all__ after 2.5.1
    assert npu_api.name_status("torch.npu.utils.device_count", "2.14.0", strict=True) is False
    assert npu_api.name_status("torch.npu.mstx.range_push", "2.8.0.post5") is False  # the class mstx lacks it
    assert npu_api.name_status("torch_npu.npu_some_undocumented_op", "2.14.0") is None
    assert npu_api.name_status("torch.npu.Stream", "2.1.0.post17") is True
