"""Real code through the command line: this interpreter's whole standard library and the pinned transformers,
diffusers and deepspeed sources go through `scan` and `apply --dry-run` without a crash. The standard library holds
deliberately broken files (bad encodings, Python 2 syntax): each is reported by name with its reason.

`scan` runs first with an empty cache, then `apply --dry-run` reuses its results: one cold and one warm run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

EXE = Path(sys.executable).with_name("ascend-port")
ERROR_LINE = re.compile(r"^error: (?P<path>.+?\.py): (?P<reason>.+)$", re.M)


def _root(corpus: str) -> Path:
    if corpus == "stdlib":
        return Path(sysconfig.get_paths()["stdlib"])
    for name, version, sdist in corpora.PINNED:
        if name == corpus:
            return corpora.fetch(name, version, sdist=sdist)
    raise KeyError(corpus)


def _python_rejects(path: Path, reason: str) -> bool:
    """Is the error one the file deserves: Python itself cannot read it, or it is too deep for LibCST?"""
    if "nested too deeply" in reason:
        return True
    try:
        compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return True
    return False


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["stdlib", "transformers", "diffusers", "deepspeed"])
def test_scan_and_dry_run_on_real_code_never_crash(corpus: str, tmp_path: Path) -> None:
    root = _root(corpus)
    env = {**os.environ, "COLUMNS": "10000"}  # one error per line, unwrapped
    outputs = {}
    # `--other-devices drop`: these projects also run on other devices, so by default their CUDA code is only
    # reported; ported in place (an NPU-only fork), every rule meets their code.
    for command in (["scan"], ["apply", "--dry-run"]):
        argv = [str(EXE), *command, str(root), "--jobs", "2", "--other-devices", "drop"]
        result = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, timeout=900)
        stderr = result.stderr.decode("utf-8", "replace")
        assert result.returncode in (0, 1, 2), stderr[-3000:]
        assert "Traceback" not in stderr and "internal error" not in stderr, stderr[-3000:]
        errors = {m["path"]: m["reason"] for m in ERROR_LINE.finditer(stderr)}
        assert (result.returncode == 2) == bool(errors), stderr[-3000:]
        outputs[command[0]] = (result.stdout, errors)
        if corpus != "stdlib":
            assert not errors, errors  # real, maintained code: every file reads and ports
        for path, reason in errors.items():
            assert _python_rejects(Path(path), reason), (path, reason)
    (_, scan_errors), (diff, apply_errors) = outputs["scan"], outputs["apply"]
    assert scan_errors == apply_errors  # the warm run reports exactly what the cold one did
    if corpus == "stdlib":
        assert any("bad_coding" in p for p in scan_errors)  # the deliberately broken files are reported
    else:
        assert diff.count(b"\n+++ b/") >= 10  # CUDA code was found and ported
