"""`ascend-port scaffold` on real CUDA extension ops (issue 31, item 5): causal-conv1d's `causal_conv1d_fwd`
(csrc/causal_conv1d.cpp, its pure-torch `causal_conv1d_ref` in another module of the package), mamba-ssm's
`selective_scan_cuda.fwd` (csrc/selective_scan/selective_scan.cpp, `selective_scan_ref` beside the call site) and
stylegan2-pytorch's `upfirdn2d` (a JIT load() of op/upfirdn2d.cpp, `upfirdn2d_native` beside it, whose shapes come
from its `_, channel, in_h, in_w = input.shape`). The generated reference and test run here, with this venv's
torch.

causal-conv1d 1.6.1 and mamba-ssm 2.3.2.post1 are their PyPI sdists, fetched by URL and checked against their
sha256 (`pip download` would build their metadata with torch and nvcc, which it cannot do here), unpacked into the
gitignored .cache/corpora (or ASCEND_PORT_CORPORA) and never committed. stylegan2-pytorch is not on PyPI: a git
snapshot at a pinned commit, unpacked from a mirror under /work/.mirror (or ASCEND_PORT_MIRRORS) where there is one,
else skipped, or by hand:
  git --git-dir=<stylegan2-pytorch.git> archive bef283a1c24087da704d16c30abc8e36e63efa0e op | tar -x -C <cache>/stylegan2-pytorch-bef283a"""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import tarfile
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascend_port.cli import app

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

MIRRORS = Path(os.environ.get("ASCEND_PORT_MIRRORS", "/work/.mirror"))
# (folder in .cache/corpora, mirror, pinned commit, the paths unpacked: all where none is named)
FILES = "https://files.pythonhosted.org/packages"
# (the sdist's URL, its sha256)
CAUSAL_CONV1D = (
    f"{FILES}/63/15/ec51d77a2df03ee93410f8ee97fceeb7181da213813c51243e9dd6d7e144/causal_conv1d-1.6.1.tar.gz",
    "e4a697ec2db3906f012e675125569f8b510b4559bc53e3095143d91369e1221b",
)
MAMBA = (
    f"{FILES}/af/48/aa7bec0efc7453fa0512276c0069c854bf684219050294266534bfef34bb/mamba_ssm-2.3.2.post1.tar.gz",
    "104cc47e9101e5401a675fa2b784f2952b9b037f3b1dd83b5ac544394e95d028",
)
# (op/ alone: the snapshot lacks some of the repository's sample images)
STYLEGAN2 = (
    "stylegan2-pytorch-bef283a",
    "rosinality+stylegan2-pytorch",
    "bef283a1c24087da704d16c30abc8e36e63efa0e",
    "op",
)


def sdist(url: str, sha256: str) -> Path:
    """The sdist at ``url`` unpacked (once) into the corpora cache; its root folder."""
    name = url.rsplit("/", 1)[1].removesuffix(".tar.gz")
    target = corpora.CACHE / f"{name}-sdist"
    if not (target / ".complete").exists():
        try:
            with urllib.request.urlopen(url, timeout=120) as response:
                data = response.read()
        except OSError as error:
            pytest.skip(f"cannot download {url}: {error}")
        assert hashlib.sha256(data).hexdigest() == sha256, f"{url} is not the pinned sdist"
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            archive.extractall(target, filter="data")
        (target / ".complete").touch()
    return target / name


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
    source = sdist(*CAUSAL_CONV1D)
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
    source = sdist(*MAMBA)
    out, tests = scaffold_and_test(source, "selective_scan_cuda.fwd", tmp_path)
    reference = (out / "selective_scan_fwd_npu" / "reference.py").read_text()
    assert "# Copied from mamba_ssm/ops/selective_scan_interface.py:115" in reference
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
