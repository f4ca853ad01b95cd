"""Issue 29, item 3 on real projects: the `npu` extra that the port adds to a pyproject.toml installs, and the
project's other extras install as before. pip resolves each ported sdist (`pip install --dry-run`, nothing is
installed) with torch held at the CPU build this virtualenv runs (torch_npu refuses a CUDA build, and PyPI's x86_64
torch is one: unheld, `.[npu]` resolves to it with its nvidia-* packages, which NPU602's finding says).

- x-transformers 2.31.10 and vector-quantize-pytorch 1.32.0 have extras (`examples`, `test`): `npu` joins them.
- PaLM-rlhf-pytorch 0.8.0 has none: the port writes the `[project.optional-dependencies]` table.
- litgpt 0.5.13 writes its extras as dotted keys under `[project]` (`optional-dependencies.extra = [...]`,
  pyproject-fmt's layout): `optional-dependencies.npu` joins them.

pip reads torch-npu's metadata from PyPI and the projects' build backends (hatchling) from the package index, as
the corpora tests download their sources: these tests need the package index, as CI has it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomlkit
from emulation import CLI, check, run_on_path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

# (distribution, version, the extras it has before the port)
PROJECTS = [
    ("x-transformers", "2.31.10", {"examples", "flash-pack-seq", "test"}),
    ("vector-quantize-pytorch", "1.32.0", {"examples"}),
    ("PaLM-rlhf-pytorch", "0.8.0", set()),
    ("litgpt", "0.5.13", {"compiler", "extra", "test"}),
]


@pytest.fixture(scope="module")
def ported(tmp_path_factory: pytest.TempPathFactory):
    """``ported(distribution, version)`` -> (the unpacked sdist, its ported copy), each ported once."""
    done: dict[str, tuple[Path, Path]] = {}

    def port(distribution: str, version: str) -> tuple[Path, Path]:
        if distribution not in done:
            (source,) = [p for p in corpora.fetch(distribution, version, sdist=True).iterdir() if p.is_dir()]
            copy = tmp_path_factory.mktemp(distribution) / source.name
            shutil.copytree(source, copy)
            check(run_on_path([*CLI, "apply", str(copy), "--no-git", "--no-cache"], cwd=copy))
            done[distribution] = source, copy
        return done[distribution]

    return port


def _pyproject(root: Path) -> dict:
    return tomlkit.loads((root / "pyproject.toml").read_text("utf-8")).unwrap()


def _resolve(target: str, folder: Path) -> dict[str, str]:
    """What ``pip install --dry-run target`` would install ({name: version}), torch held at this torch."""
    constraints = folder / "constraints.txt"
    constraints.write_text(f"torch=={torch.__version__}\n", "utf-8")
    report = folder / "report.json"
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
    command += ["--report", str(report), "-c", str(constraints), target]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if result.returncode and f"matching distribution found for torch=={torch.__version__}" in result.stderr:
        pytest.skip(f"no wheel of torch {torch.__version__} on this machine's package index")
    assert result.returncode == 0, result.stderr[-4000:]
    installs = json.loads(report.read_text("utf-8"))["install"]
    return {re.sub(r"[-_.]+", "-", item["metadata"]["name"]).lower(): item["metadata"]["version"] for item in installs}


@pytest.mark.parametrize("distribution, version, extras", PROJECTS, ids=[p[0] for p in PROJECTS])
def test_the_npu_extra_installs_torch_npu_beside_the_cpu_torch(ported, tmp_path, distribution, version, extras):
    source, copy = ported(distribution, version)
    before, after = _pyproject(source)["project"], _pyproject(copy)["project"]
    added = after["optional-dependencies"]
    assert set(before.get("optional-dependencies", {})) == extras
    assert added["npu"] == ["torch-npu"], added
    # nothing else changes: the core dependencies and every other extra install what they installed
    assert after["dependencies"] == before["dependencies"]
    assert {k: v for k, v in added.items() if k != "npu"} == before.get("optional-dependencies", {})

    installs = _resolve(f"{copy}[npu]", tmp_path)
    assert installs["torch"] == torch.__version__, installs
    paired = re.match(r"\d+\.\d+\.\d+", torch.__version__)
    assert paired and installs["torch-npu"].startswith(paired.group()), installs  # the release built for it
    assert not [name for name in installs if name.startswith(("nvidia-", "cuda-"))], installs


@pytest.mark.parametrize(
    "distribution, version, extras",
    [
        ("x-transformers", "2.31.10", "examples,test"),
        ("vector-quantize-pytorch", "1.32.0", "examples"),
        ("litgpt", "0.5.13", "test"),
    ],
    ids=lambda value: value if "." not in value else None,
)
def test_the_other_extras_install_as_before(ported, tmp_path, distribution, version, extras):
    """The extras the project had resolve to the same packages from the ported copy as from the original, without
    torch-npu."""
    source, copy = ported(distribution, version)
    (tmp_path / "before").mkdir()
    (tmp_path / "after").mkdir()
    before = _resolve(f"{source}[{extras}]", tmp_path / "before")
    after = _resolve(f"{copy}[{extras}]", tmp_path / "after")
    assert after == before
    assert "torch-npu" not in after
