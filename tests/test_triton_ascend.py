"""The Triton rewrites (NPU508-NPU513) on Triton-Ascend 3.2.0's own compiler, without an NPU.

Triton-Ascend cannot share a virtualenv with community Triton, so the PyPI wheel goes into a virtualenv of its own
under the user's cache (made once, then reused) and one subprocess there (tests/triton_ascend_worker.py) compiles
every golden kernel pair through the frontend, make_ttir and the adapter for an Ascend 910B target. The original must
fail where Triton-Ascend 3.2.0 rejects it and the port must always compile. It proves nothing about CANN's bishengir
stage or NPU numerics. Skipped where the wheel cannot be installed (it is cp311 x86_64 only, and needs the package
registry), unless ASCEND_PORT_REQUIRE_TRITON_ASCEND=1 (CI) makes that a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
from kernel_pairs import PAIRS

pytestmark = pytest.mark.triton_ascend

WHEEL = "triton-ascend==3.2.0"
# Read at import, before conftest points XDG_CACHE_HOME at a per-test folder: the virtualenv is made once per user.
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ascend-port"
VENV = Path(os.environ.get("ASCEND_PORT_TRITON_ASCEND_VENV") or CACHE / "triton-ascend-venv")
WORKER = Path(__file__).resolve().parent / "triton_ascend_worker.py"


def _unavailable(reason: str) -> None:
    if os.environ.get("ASCEND_PORT_REQUIRE_TRITON_ASCEND") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def _venv_python() -> Path:
    python = VENV / "bin" / "python"
    marker = VENV / ".ascend-port-ready"
    if marker.exists() and marker.read_text() == WHEEL:
        return python
    base = sys.executable if sys.version_info[:2] == (3, 11) else shutil.which("python3.11")
    if base is None:
        _unavailable(f"{WHEEL} is a cp311 wheel and there is no python3.11")
    assert base is not None
    shutil.rmtree(VENV, ignore_errors=True)
    steps = (
        [base, "-m", "venv", str(VENV)],
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", WHEEL, "pybind11", "numpy"],
    )
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=900)
        if done.returncode:
            _unavailable(f"cannot install {WHEEL}: {' '.join(step[2:4])}: {done.stderr.strip()[-500:]}")
    marker.write_text(WHEEL)
    return python


@pytest.fixture(scope="module")
def outcomes() -> dict[tuple[str, str, str], str | None]:
    python = _venv_python()
    done = subprocess.run([str(python), str(WORKER)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return {(r["case"], r["run"], r["side"]): r["error"] for r in json.loads(done.stdout.splitlines()[-1])}


CASES = [(pair, run, compiles) for pair in PAIRS for run, compiles in pair.ascend]


@pytest.mark.parametrize(
    ("pair", "run", "original_compiles"),
    CASES,
    ids=[f"{p.rule}-{p.kernel}-{i}" for i, (p, _, _) in enumerate(CASES)],
)
def test_port_compiles_on_triton_ascend(outcomes, pair, run, original_compiles: bool) -> None:
    case = f"{pair.rule}/{pair.case}/{pair.kernel}"
    original, ported = outcomes[(case, repr(run), "original")], outcomes[(case, repr(run), "ported")]
    assert ported is None, f"{case} {run}: the port does not compile on Triton-Ascend 3.2.0: {ported}"
    if original_compiles:
        assert original is None, f"{case} {run}: the original should compile: {original}"
    else:
        assert original is not None, f"{case} {run}: the original compiles on 3.2.0: the rewrite proves nothing"
