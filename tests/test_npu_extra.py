"""The npu extra (NPU602) and the install commands that name the project's extras: a project whose pyproject.toml
gets an ``npu`` extra has its scripts, Dockerfiles and Makefiles install that one where they installed the CUDA
hosts' (by its name, or bound to a CUDA wheel index); anything else they install stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_port.run.engine import RunConfig, run

PYPROJECT = """\
[project]
name = "app"
version = "1.0"
dependencies = ["torch>=2.5", "numpy"]

[project.optional-dependencies]
gpu = ["torch==2.5.1"]
accel = ["torch==2.5.1"]
cpu = ["torch==2.5.1"]
dev = ["pytest"]

[tool.uv.sources]
torch = [{ index = "torch-cu124", extra = "accel" }, { index = "torch-cpu", extra = "cpu" }]

[[tool.uv.index]]
name = "torch-cu124"
url = "https://download.pytorch.org/whl/cu124"

[[tool.uv.index]]
name = "torch-cpu"
url = "https://download.pytorch.org/whl/cpu"
"""
SCRIPT = """\
#!/bin/bash
uv sync --extra gpu
uv sync --extra=accel --extra dev
pip install -e ".[gpu,dev]"
python -m pip install .[accel]
pip install .[cpu] ./vendor/lib[dev] ./third_party/lib[gpu] torch[gpu]
"""
PORTED = """\
#!/bin/bash
uv sync --extra npu
uv sync --extra=npu --extra dev
pip install -e ".[npu,dev]"
python -m pip install .[npu]
pip install .[cpu] ./vendor/lib[dev] ./third_party/lib[gpu] torch[gpu]
"""


def _ported(tmp_path: Path, files: dict[str, str]) -> dict[str, str | None]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = run([tmp_path], RunConfig(cache=False, jobs=1))
    new = {}
    for file in result.files:
        name = Path(file.path).resolve().relative_to(tmp_path.resolve()).as_posix()
        new[name] = file.new_bytes.decode() if file.new_bytes is not None else None
    return new


def test_the_install_commands_name_the_npu_extra(tmp_path: Path) -> None:
    new = _ported(
        tmp_path, {"pyproject.toml": PYPROJECT, "setup.sh": SCRIPT, "Makefile": "install:\n\tpip install .[gpu]\n"}
    )
    assert 'npu = ["torch-npu"]' in (new["pyproject.toml"] or "")
    assert new["setup.sh"] == PORTED  # (`.[cpu]`, another path's extras and a package's extras stay)
    assert new["Makefile"] == "install:\n\tpip install .[npu]\n"


def test_a_notebook_installs_the_npu_extra_too(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell('!pip install -e ".[gpu,dev]"\n%pip install .[accel]\n%pip install .[cpu]'),
        nbformat.v4.new_code_cell("%%bash\nuv sync --extra gpu"),
    ]
    new = _ported(tmp_path, {"pyproject.toml": PYPROJECT, "setup.ipynb": nbformat.writes(notebook)})
    cells = [cell.source for cell in nbformat.reads(new["setup.ipynb"] or "", as_version=4).cells]
    assert cells == [
        '!pip install -e ".[npu,dev]"\n%pip install .[npu]\n%pip install .[cpu]',
        "%%bash\nuv sync --extra npu",
    ]


@pytest.mark.parametrize(
    "pyproject",
    [
        None,  # no pyproject.toml: no npu extra to install
        PYPROJECT.replace('version = "1.0"', 'version = "1.0"\ndynamic = ["optional-dependencies"]'),  # setup.py's
        PYPROJECT.replace('dependencies = ["torch>=2.5", "numpy"]', 'dependencies = ["numpy"]').replace(
            "torch==2.5.1", "jax"
        ),  # no torch anywhere: no npu extra either
        PYPROJECT.replace('"torch>=2.5"', '"torch==2.1.2"'),  # no torch-npu release pairs with it: no npu extra
    ],
    ids=["no-pyproject", "dynamic-extras", "no-torch", "unpaired-torch"],
)
def test_the_install_commands_stay_without_an_npu_extra(tmp_path: Path, pyproject: str | None) -> None:
    files = {"setup.sh": SCRIPT, **({"pyproject.toml": pyproject} if pyproject else {})}
    assert _ported(tmp_path, files).get("setup.sh") is None


def test_a_stale_lock_file_is_named_with_the_command_that_refreshes_it(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "poetry.lock").write_text("")  # (no uv.lock: only the lock files there are named)
    notes = run([tmp_path], RunConfig(cache=False, jobs=1)).notes
    assert [n for n in notes if ".lock" in n] == [
        f"{(tmp_path / 'poetry.lock').resolve().as_posix()} will not match the ported pyproject.toml: run "
        "`poetry lock` there after the port"
    ]
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1"\n')  # nothing to port
    assert not [n for n in run([tmp_path], RunConfig(cache=False, jobs=1)).notes if ".lock" in n]
