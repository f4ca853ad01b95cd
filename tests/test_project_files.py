"""The files around the Python code (issue 6): which files are claimed, that every ported file still reads in its
own format (and bash accepts the scripts), that the CLI covers them and keeps modes and bytes, and that bad input
is refused with its reason."""

from __future__ import annotations

import configparser
import json
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from golden_cases import cases
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.core.options import PortOptions
from ascend_port.core.porting import PortError
from ascend_port.core.selection import Selection
from ascend_port.formats.requirement import parse_requirement
from ascend_port.formats.shell_lexer import lex
from ascend_port.port.filetypes import file_kind
from ascend_port.port.handlers import handler_for
from ascend_port.port.notebook import port_notebook
from ascend_port.rules.project.requirements import torch_npu_specifier

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cuda_trainer"
runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.mark.parametrize(
    "name,kind",
    [
        ("requirements.txt", "requirements"),
        ("requirements-dev.txt", "requirements"),
        ("dev-requirements.txt", "requirements"),
        ("constraints.txt", "requirements"),
        ("requirements/base.txt", "requirements"),
        ("requirements.in", "requirements"),
        ("pyproject.toml", "pyproject"),
        ("setup.py", "setup.py"),
        ("setup.cfg", "setup.cfg"),
        ("scripts/train.sh", "shell"),
        ("run.bash", "shell"),
        ("Makefile", "makefile"),
        ("GNUmakefile", "makefile"),
        ("rules.mk", "makefile"),
        ("Dockerfile", "dockerfile"),
        ("Dockerfile.gpu", "dockerfile"),
        ("gpu.Dockerfile", "dockerfile"),
        ("configs/train.yaml", "yaml"),
        ("default_config.yml", "yaml"),
        ("ds_config.json", "json"),
        ("zero3_offload.json", "json"),
        ("accelerate_config.json", "json"),
        ("notebooks/explore.ipynb", "notebook"),
        # Not configs, or not the project's: never read.
        ("package.json", None),
        ("package-lock.json", None),
        ("tsconfig.json", None),
        ("data/train.json", None),
        ("vocab.json", None),
        (".github/workflows/ci.yml", None),
        (".vscode/settings.json", None),
        ("pnpm-lock.yaml", None),
        ("README.md", None),
        ("notes.txt", None),
        ("Cargo.toml", None),
    ],
)
def test_file_kinds_by_name(name: str, kind: str | None) -> None:
    assert file_kind(Path(name)) == kind
    assert (handler_for(Path(name)) is not None) == (kind is not None or name.endswith(".py"))


def _golden_outputs(suffixes: tuple[str, ...]) -> list[Path]:
    found = [c.expected for c in cases() if c.expected.exists() and c.handler_name.name.endswith(suffixes)]
    assert found, suffixes
    return found


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_ported_shell_scripts_pass_bash_syntax_check() -> None:
    for path in _golden_outputs((".sh",)):
        result = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert result.returncode == 0, f"{path}: {result.stderr}"


def test_ported_configs_and_manifests_read_in_their_format() -> None:
    import nbformat
    import tomlkit
    from ruamel.yaml import YAML

    for path in _golden_outputs((".toml",)):
        tomlkit.parse(path.read_text("utf-8"))
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = True  # (as PyYAML reads them: golden/NPU621/duplicate_keys)
    for path in _golden_outputs((".yaml", ".yml")):
        list(yaml.load_all(path.read_text("utf-8")))
    for path in _golden_outputs((".json",)):
        json.loads(path.read_text("utf-8"))
    for path in _golden_outputs((".cfg",)):
        configparser.ConfigParser(interpolation=None).read_string(path.read_text("utf-8"))
    for path in _golden_outputs((".ipynb",)):
        nbformat.validate(nbformat.reads(path.read_text("utf-8"), as_version=4))


def test_ported_requirement_lines_are_valid_pep508() -> None:
    packaging = pytest.importorskip("packaging.requirements")
    for path in _golden_outputs(("requirements.txt", "constraints.txt")):
        for line in path.read_text("utf-8").splitlines():
            text = line.split(" #", 1)[0].strip().rstrip("\\").strip()
            if text and not text.startswith(("#", "-", "http")):
                packaging.Requirement(text)  # raises on an invalid requirement


def test_notebook_outputs_and_metadata_are_kept() -> None:
    for case in cases():
        if case.handler_name.suffix != ".ipynb" or not case.expected.exists():
            continue
        before = json.loads(case.input.read_text("utf-8"))
        after = json.loads(case.expected.read_text("utf-8"))
        assert after["metadata"] == before["metadata"]
        for old, new in zip(before["cells"], after["cells"], strict=True):
            assert {k: v for k, v in old.items() if k != "source"} == {k: v for k, v in new.items() if k != "source"}
            if old["cell_type"] != "code":
                assert old["source"] == new["source"]


def test_notebook_written_with_ascii_escapes_keeps_escaping_new_lines() -> None:
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": "a",
                "metadata": {},
                "outputs": [],
                "source": ["# caf\u00e9\n", "x = y.cuda()  # \u00e9t\u00e9"],
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    text = json.dumps(notebook, indent=1, ensure_ascii=True) + "\n"
    new_text, findings = port_notebook(text, Selection(), PortOptions())
    assert new_text is not None and new_text.isascii()
    assert '"# caf\\u00e9\\n"' in new_text  # the unchanged line keeps its token
    assert '"x = y.npu()  # \\u00e9t\\u00e9"' in new_text
    assert json.loads(new_text)["cells"][0]["outputs"] == []


def test_notebook_cell_source_written_as_one_string_stays_one_string() -> None:
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": "a",
                "metadata": {},
                "outputs": [],
                "source": "import torch\nx = torch.ones(1).cuda()\n",
            },
            {"cell_type": "raw", "id": "b", "metadata": {}, "source": "x.cuda()"},
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    new_text, findings = port_notebook(json.dumps(notebook, indent=2), Selection(), PortOptions())
    cells = json.loads(new_text)["cells"]
    assert cells[0]["source"] == "import torch\nimport torch_npu\nx = torch.ones(1).npu()\n"
    assert cells[1]["source"] == "x.cuda()"  # raw and markdown cells are text
    assert {f.rule.id for f in findings} == {"NPU100", "NPU101"}


def test_notebook_with_a_cell_that_is_not_python_names_the_cell() -> None:
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": "a",
                "metadata": {},
                "outputs": [],
                "source": ["x = [y.cuda(\n"],
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    with pytest.raises(PortError, match="cell 1"):
        port_notebook(json.dumps(notebook, indent=1), Selection(), PortOptions())


@pytest.mark.parametrize(
    "name,data,reason",
    [
        ("configs/bad.yaml", b"device: [cuda\nbackend: nccl\n", "invalid YAML"),
        ("ds_config.json", b'{"device": "cuda",}', "invalid JSON"),
        ("pyproject.toml", b'[project]\ndependencies = ["flash-attn"\n', "invalid TOML"),
        ("explore.ipynb", b'{"cells": [', "invalid notebook JSON"),
        ("old.ipynb", b'{"nbformat": 3, "worksheets": []}', "nbformat 4"),
        ("setup.cfg", b"[options\ninstall_requires = flash-attn\n", "invalid setup.cfg"),
    ],
)
def test_bad_files_are_refused_with_their_reason(name: str, data: bytes, reason: str) -> None:
    with pytest.raises(PortError, match=reason):
        handler_for(Path(name)).port(data, Selection(), PortOptions())


def test_helm_templates_are_skipped_with_their_reason() -> None:
    from ascend_port.core.sources import SourceError

    template = b"resources:\n  limits:\n    nvidia.com/gpu: {{ .Values.gpus }}\n{{- if .Values.cuda }}\n"
    with pytest.raises(SourceError, match="template") as raised:
        handler_for(Path("chart/templates/deploy.yaml")).port(template, Selection(), PortOptions())
    assert raised.value.binary  # the engine reports it as skipped, with the reason


def test_rules_can_be_selected_per_file_type() -> None:
    data = (EXAMPLE / "requirements.txt").read_bytes()
    handler = handler_for(Path("requirements.txt"))
    assert handler.port(data, Selection(ignore=("NPU6",)), PortOptions()).new_text is None
    only_removals = handler.port(data, Selection(select=("NPU600",)), PortOptions())
    assert {f.rule.id for f in only_removals.findings} == {"NPU600"}
    assert "triton==3.1.0" in only_removals.new_text and "torch-npu" not in only_removals.new_text


@pytest.mark.parametrize(
    "spec,expected",
    [
        ("==2.5.1", "==2.5.1.*"),
        ("==2.5.1+cu121", "==2.5.1.*"),
        ("==2.4", "==2.4.0.*"),
        ("==2.5", None),  # torch-npu has 2.5.1 only: no pin pip cannot satisfy
        ("==2.1.2", None),  # (LLaVA's pin)
        ("==2.7.0", None),  # (InternVL's pin: PyPI has 2.7.1)
        ("==2.4.*", "==2.4.*"),
        ("==2.15.*", None),  # newer than the release table
        (">=2.1,<2.6", ""),
        ("", ""),
        ("~=2.5.1", ""),
        ("==1.13.1", None),
        ("==2.0.1", None),
    ],
)
def test_torch_npu_pairing(spec: str, expected: str | None) -> None:
    assert torch_npu_specifier(spec)[0] == expected


def test_requirement_reader_keeps_marker_and_rejects_non_requirements() -> None:
    req = parse_requirement('torch[opt] == 2.5.1 ; python_version >= "3.10"')
    assert (req.name, req.specifier, req.marker) == ("torch", "== 2.5.1", ' ; python_version >= "3.10"')
    assert parse_requirement("./local/path") is None
    assert parse_requirement("flash-attn @ https://example.com/flash_attn-2.6.3-cp311.whl").is_url


def test_shell_lexer_never_sees_words_in_comments_quotes_or_heredocs() -> None:
    script = (
        "echo 'nvidia-smi' \"$(nvidia-smi -L)\"  # nvidia-smi\n"
        "cat <<EOF\nnvidia-smi\nEOF\n"
        "x=$(( 1 + 2 )) `nvidia-smi`\n"
    )
    commands = [[script[w.start : w.end] for w in command] for command in lex(script).commands]
    assert ["nvidia-smi", "-L"] in commands and ["nvidia-smi"] in commands
    assert sum(words.count("nvidia-smi") for words in commands) == 2


def test_example_project_is_covered_by_scan_and_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "cuda_trainer"
    shutil.copytree(EXAMPLE, project)
    monkeypatch.chdir(tmp_path)
    script = project / "scripts" / "train.sh"
    assert stat.S_IMODE(script.stat().st_mode) & 0o111, "the example launch script is executable"
    mode = stat.S_IMODE(script.stat().st_mode)

    scan = invoke("scan", "cuda_trainer", "--exit-zero")
    for rule in ("NPU602", "NPU616", "NPU620", "NPU613"):  # requirements, train.sh, train.yaml, explore.ipynb
        assert rule in scan.stdout, rule

    dry = invoke("apply", "cuda_trainer", "--dry-run")
    assert dry.exit_code == 1
    for header in (
        "+++ b/cuda_trainer/requirements.txt",
        "+++ b/cuda_trainer/scripts/train.sh",
        "+++ b/cuda_trainer/configs/train.yaml",
        "+++ b/cuda_trainer/notebooks/explore.ipynb",
    ):
        assert header in dry.stdout, header

    untouched = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    assert invoke("apply", "cuda_trainer", "--no-git").exit_code == 0
    assert stat.S_IMODE(script.stat().st_mode) == mode
    assert "torchrun --nproc_per_node=$NPROC train.py --device npu --backend hccl" in script.read_text()
    assert "device: npu" in (project / "configs" / "train.yaml").read_text()
    assert invoke("apply", "cuda_trainer", "--dry-run").exit_code == 0  # idempotent
    readme = project / "README.md"
    assert readme.read_bytes() == untouched[readme]  # files no handler claims are never written


def test_every_file_format_names_a_handler_once() -> None:
    """port/filetypes.FORMATS: one entry per kind, each naming a handler class that ports bytes."""
    from ascend_port.port.filetypes import FORMATS, handler

    kinds = [f.kind for f in FORMATS]
    assert len(kinds) == len(set(kinds))
    for kind in kinds:
        assert callable(handler(kind).port), kind
