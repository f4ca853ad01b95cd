"""Pinned real-world source trees from PyPI, downloaded once into the repository's gitignored ``.cache/corpora``.

Only wheels (or sdists) are downloaded and unpacked: nothing is installed, built, imported or committed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("ASCEND_PORT_CORPORA", ROOT / ".cache" / "corpora"))

TRANSFORMERS = ("transformers", "5.23.0")
DIFFUSERS = ("diffusers", "0.42.1")
DEEPSPEED = ("deepspeed", "0.19.8")  # sdist only: no wheel on PyPI
# (name, version, sdist): the real code the benchmarks and the slow tests run on.
PINNED = ((*TRANSFORMERS, False), (*DIFFUSERS, False), (*DEEPSPEED, True))

# Multi-device code (issue 15): programs that already run on NPU and on other vendors' devices beside CUDA, whose
# port must leave those paths working (tests/test_real_multidevice.py, scripts/sample_hunks.py).
DEEPSPEED_MULTI_DEVICE = ("deepspeed", "0.16.5")  # sdist only; its own NPU_Accelerator, HPU/MPS/XPU/... backends
ACCELERATE = ("accelerate", "1.15.0")  # is_npu_available() beside CUDA, MLU, SDAA, MUSA, HPU, XPU, neuron
MULTI_DEVICE = ((*DEEPSPEED_MULTI_DEVICE, True), (*DIFFUSERS, False), (*ACCELERATE, False))

# Project files (issue 16): LLaMA-Factory's sdist ships its CUDA, NPU and ROCm Dockerfiles and compose files side by
# side (tests/test_real_project_files.py): the CUDA ones are ported, the NPU ones show what the port aims at.
LLAMAFACTORY = ("llamafactory", "0.9.5", True)


def fetch(name: str, version: str, *, sdist: bool = False, cache: Path | None = None) -> Path:
    """The unpacked distribution ``name==version`` (downloading it the first time) in ``cache`` (default CACHE).
    Raises subprocess.CalledProcessError when pip cannot download it."""
    target = (cache or CACHE) / f"{name}-{version}{'-sdist' if sdist else ''}"
    if (target / ".complete").exists():
        return target
    with tempfile.TemporaryDirectory() as tmp:
        kind = ["--no-binary", ":all:"] if sdist else ["--only-binary", ":all:"]
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", *kind, f"{name}=={version}", "-d", tmp],
            check=True,
        )
        (archive,) = Path(tmp).iterdir()
        target.mkdir(parents=True, exist_ok=True)
        if archive.suffix in (".whl", ".zip"):
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(target)
        else:
            with tarfile.open(archive) as tf:
                tf.extractall(target, filter="data")
    (target / ".complete").touch()
    return target


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if p.is_file())
