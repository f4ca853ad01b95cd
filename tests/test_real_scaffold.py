"""`ascend-port scaffold` on real CUDA extension ops (issue 31, item 5): causal-conv1d's `causal_conv1d_fwd`
(csrc/causal_conv1d.cpp, its pure-torch `causal_conv1d_ref` in another module of the package), mamba-ssm's
`selective_scan_cuda.fwd` (csrc/selective_scan/selective_scan.cpp, `selective_scan_ref` beside the call site) and
stylegan2-pytorch's `upfirdn2d` (a JIT load() of op/upfirdn2d.cpp, `upfirdn2d_native` beside it, whose shapes come
from its `_, channel, in_h, in_w = input.shape`). The generated reference and test run here, with this venv's
torch. The sources are git snapshots at pinned commits (their PyPI sdists build metadata with torch and nvcc, which
pip download cannot do here), unpacked into the gitignored .cache/corpora and never committed, by the fixture from a
mirror under /work/.mirror (or ASCEND_PORT_MIRRORS) where there is one, else by hand:
  git --git-dir=<causal-conv1d.git> archive 0d2252d161f25f7907bbd05985c08ab98d255874 | tar -x -C <cache>/causal-conv1d-0d2252d
  git --git-dir=<mamba.git> archive e9594ce1c732d97440f0332fdc43170a2294dbfa | tar -x -C <cache>/mamba-e9594ce
  git --git-dir=<stylegan2-pytorch.git> archive bef283a1c24087da704d16c30abc8e36e63efa0e op | tar -x -C <cache>/stylegan2-pytorch-bef283a
(<cache>: .cache/corpora, or ASCEND_PORT_CORPORA)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascend_port.cli import app

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

MIRRORS = Path(os.environ.get("ASCEND_PORT_MIRRORS", "/work/.mirror"))
# (folder in .cache/corpora, mirror, pinned commit, the paths unpacked: all where none is named)
CAUSAL_CONV1D = ("causal-conv1d-0d2252d", "Dao-AILab+causal-conv1d", "0d2252d161f25f7907bbd05985c08ab98d255874")
MAMBA = ("mamba-e9594ce", "state-spaces+mamba", "e9594ce1c732d97440f0332fdc43170a2294dbfa")
# (op/ alone: the snapshot lacks some of the repository's sample images)
STYLEGAN2 = (
    "stylegan2-pytorch-bef283a",
    "rosinality+stylegan2-pytorch",
    "bef283a1c24087da704d16c30abc8e36e63efa0e",
    "op",
)


def unpacked(folder: str, mirror: str, commit: str, *paths: str) -> Path:
    target = corpora.CACHE / folder
    if (target / ".complete").exists():
        return target
    git_dir = MIRRORS / mirror / "repo"
    if not git_dir.exists():
        pytest.skip(f"{folder} is not unpacked at {target} and no mirror at {git_dir} (see the module docstring)")
    target.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", f"--git-dir={git_dir}", "archive", commit, *paths], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    (target / ".complete").touch()
    return target


def scaffold_and_test(source: Path, op: str, tmp_path: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = tmp_path / "scaffold"
    result = CliRunner().invoke(app, ["scaffold", op, str(source), "--out", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(out)],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return out, tests


@pytest.mark.slow
def test_causal_conv1d_fwd_gets_its_projects_reference_and_the_test_runs(tmp_path: Path) -> None:
    source = unpacked(*CAUSAL_CONV1D)
    out, tests = scaffold_and_test(source, "causal_conv1d_fwd", tmp_path)
    reference = (out / "causal_conv1d_fwd_npu" / "reference.py").read_text()
    assert "# Copied from causal_conv1d/causal_conv1d_interface.py:132" in reference
    assert (
        "def causal_conv1d_fwd(x, weight, bias, seq_idx, initial_states, out, final_states_out, silu_activation):"
        in reference
    )
    assert "has no parameter for seq_idx, silu_activation" in reference
    assert "out.copy_(first)" in reference
    test = (out / "test_causal_conv1d_fwd.py").read_text()
    assert '"weight": rand(3, 5),  # (dim, width)' in test and "EXPECTED_SHAPE = (2, 3, 4)" in test
    assert "causal_conv1d/cpp_functions.py:22 in _causal_conv1d_fwd_cpp() (result discarded)" in test
    binding = (out / "torch_binding" / "causal_conv1d_fwd_npu.cpp").read_text()
    assert "Tensor(a!) out" in binding and "-> ()" in binding
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "1 passed, 2 skipped" in tests.stdout


@pytest.mark.slow
def test_selective_scan_fwd_gets_its_projects_reference_and_the_test_runs(tmp_path: Path) -> None:
    source = unpacked(*MAMBA)
    out, tests = scaffold_and_test(source, "selective_scan_cuda.fwd", tmp_path)
    reference = (out / "selective_scan_fwd_npu" / "reference.py").read_text()
    assert "# Copied from mamba_ssm/ops/selective_scan_interface.py:127" in reference
    assert "from einops import rearrange, repeat" in reference and "import selective_scan_cuda" not in reference
    test = (out / "test_selective_scan_fwd.py").read_text()
    assert "SIZES = {'B': 2, 'D': 3, 'L': 4, 'N': 5}" in test and '"B": rand(2, 5, 4),  # (B, N, L)' in test
    assert "The call sites unpack 3 results: selective_scan_ref gives the first" in test
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "1 passed, 2 skipped" in tests.stdout


@pytest.mark.slow
def test_upfirdn2d_of_a_jit_build_gets_its_projects_native_version_and_the_test_runs(tmp_path: Path) -> None:
    source = unpacked(*STYLEGAN2)
    out, tests = scaffold_and_test(source, "upfirdn2d.upfirdn2d", tmp_path)
    reference = (out / "upfirdn2d_npu" / "reference.py").read_text()
    assert "# Copied from op/upfirdn2d.py:168" in reference
    assert "result = upfirdn2d_native(input=input, kernel=kernel, up_x=up_x," in reference
    test = (out / "test_upfirdn2d.py").read_text()
    assert '"input": rand(2, 3, 4, 5),  # (input_dim0, channel, in_h, in_w)' in test
    assert "op/upfirdn2d.py:32 in forward() (result used)" in test
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "1 passed, 2 skipped" in tests.stdout
