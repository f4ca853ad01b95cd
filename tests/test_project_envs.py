"""Issue 16 section 4: conda environment files, Docker Compose files, Poetry tables, ``pip install`` in shell code and
Dockerfile exec form. The golden cases (NPU600-NPU640) show each rewrite; these tests check what the outputs must
be in their own formats, and which file names pick the new handlers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from golden_cases import cases

from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.filetypes import file_kind
from ascend_port.port.handlers import handler_for


@pytest.mark.parametrize(
    "name,kind",
    [
        ("environment.yml", "conda"),
        ("environment.yaml", "conda"),
        ("envs/environment-cuda.yml", "conda"),
        ("conda.yaml", "conda"),
        ("conda-env.yml", "conda"),
        ("docker-compose.yml", "compose"),
        ("docker-compose.gpu.yaml", "compose"),
        ("compose.yaml", "compose"),
        ("docker/docker-compose.override.yml", "compose"),
        ("configs/train.yaml", "yaml"),
        ("compose_config.json", "json"),
        (".github/environment.yml", None),  # CI machines, not the project's
        ("conda-lock.yml", None),
    ],
)
def test_file_kinds_of_environment_and_compose_files(name: str, kind: str | None) -> None:
    assert file_kind(Path(name)) == kind


def _outputs(suffix: str) -> list[Path]:
    found = [c.expected for c in cases() if c.expected.exists() and c.handler_name.name.endswith(suffix)]
    assert found, suffix
    return found


def test_ported_exec_form_instructions_stay_json_arrays() -> None:
    for path in _outputs("Dockerfile"):
        for line in path.read_text("utf-8").splitlines():
            m = re.match(r"^(?:CMD|ENTRYPOINT|RUN)\s+(\[.*)$", line)
            if m and not m.group(1).endswith("\\"):
                assert isinstance(json.loads(m.group(1)), list), f"{path}: {line}"


# poetry-core's constraint patterns (poetry/core/constraints/version/patterns.py): what Poetry accepts.
_POETRY_X = re.compile(r"^(?P<op>!=|==)?\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.[xX*])+$")


def test_poetry_torch_npu_constraints_are_poetry_constraints() -> None:
    import tomlkit

    seen = 0
    for path in _outputs("pyproject.toml"):
        poetry = tomlkit.parse(path.read_text("utf-8")).unwrap().get("tool", {}).get("poetry", {})
        for table in [poetry.get("dependencies", {})] + [
            g.get("dependencies", {}) for g in poetry.get("group", {}).values()
        ]:
            if "torch-npu" in table:
                seen += 1
                assert table["torch-npu"] == "*" or _POETRY_X.match(table["torch-npu"]), path
    assert seen >= 2


def test_conda_pip_lists_hold_valid_requirements() -> None:
    packaging = pytest.importorskip("packaging.requirements")
    from ruamel.yaml import YAML

    for path in _outputs(".yml"):
        if file_kind(Path(path.name.replace(".out.", ".", 1).split("@")[-1])) != "conda":
            continue
        document = YAML(typ="safe").load(path.read_text("utf-8"))
        for item in document.get("dependencies", []):
            for line in item.get("pip", []) if isinstance(item, dict) else []:
                if not line.startswith("-"):
                    packaging.Requirement(line)


def test_a_conda_file_that_does_not_parse_is_refused_with_its_reason() -> None:
    from ascend_port.core.porting import PortError

    with pytest.raises(PortError, match="invalid YAML"):
        handler_for(Path("environment.yml")).port(b"dependencies: [a\n", Selection(), PortOptions())


def test_pip_install_cut_keeps_the_other_packages_and_the_continuations() -> None:
    source = "pip install \\\n    torch \\\n    flash-attn \\\n    einops\n"
    ported = handler_for(Path("setup.sh")).port(source.encode(), Selection(), PortOptions())
    assert ported.new_text == (
        "# flash-attn removed by ascend-port NPU600: CUDA-only; torch_npu.npu_fusion_attention replaces it\n"
        "pip install \\\n    torch \\\n    einops\n"
    )


def test_selection_leaves_a_step_unported_when_its_rule_is_off() -> None:
    source = b"pip install flash-attn\npip install torch flash-attn\n"
    ported = handler_for(Path("setup.sh")).port(source, Selection(select=("NPU617",)), PortOptions())
    assert [f.rule.id for f in ported.findings] == ["NPU617"]
    assert ported.new_text is not None and "pip install torch flash-attn" in ported.new_text
