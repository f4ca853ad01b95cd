"""Issue 16 section 1: libraries that take device or backend names (NPU800-NPU807, data/library_support.json).

The golden cases (golden/NPU80x) pin each rule's output; these tests check the shared table, and the seams with
the device rules (a Lightning accelerator is never "npu"; lm-eval's device is not also ported by NPU103) and with
the dependency matrix."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_port.core import library_support
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for
from ascend_port.reports import packages


def port(text: str, name: str = "train.py") -> str:
    handler = handler_for(Path(name))
    assert handler is not None
    result = handler.port(text.encode(), Selection(), PortOptions())
    return text if result.new_text is None else result.new_text


def test_every_row_names_its_source_and_way_forward() -> None:
    rows = library_support.libraries()
    assert len({r.name for r in rows}) == len(rows)
    for row in rows:
        assert row.source and row.way and row.accepts, row.name
        assert row.status in (packages.COMPATIBLE, packages.REPLACE, packages.UNSUPPORTED), row.name


@pytest.mark.parametrize(
    "name",
    ["lightning", "transformers", "bitsandbytes", "lm-eval", "accelerate", "deepspeed", "mmcv", "xfuser", "yunchang"]
    + ["lmdeploy", "flashinfer-python", "sageattention", "liger-kernel", "nvfuser", "polygraphy", "cuda-python"],
)
def test_the_dependency_matrix_lists_the_table(name: str) -> None:
    row = library_support.library(name)
    package = packages.lookup(name)
    assert package is not None and package.status == row.status and row.way in package.note
    for module in row.imports:
        assert packages.distribution_for_import(module) == name


def test_bitsandbytes_is_cuda_only_in_the_matrix() -> None:
    package = packages.lookup("bitsandbytes")
    assert package is not None and package.status == packages.UNSUPPORTED


@pytest.mark.parametrize(
    "qualified, expected",
    [
        ("lightning.Fabric", True),
        ("lightning.pytorch.Trainer", True),
        ("pytorch_lightning.Trainer", True),
        ("lightning_fabric.Fabric", True),
        ("transformers.Trainer", False),
        ("lightning.pytorch.callbacks.ModelCheckpoint", False),
        (None, False),
    ],
)
def test_lightning_entries(qualified: str | None, expected: bool) -> None:
    assert library_support.is_lightning_entry(qualified) is expected


def test_lightning_accelerator_is_never_npu() -> None:
    source = (
        "import pytorch_lightning as pl\n"
        "import argparse\n"
        "parser = argparse.ArgumentParser()\n"
        'parser.add_argument("--accelerator", default="cuda")\n'
        'accelerator = "cuda"\n'
        'config = {"accelerator": "gpu", "device": "cuda"}\n'
        'trainer = pl.Trainer(accelerator="cuda")\n'
        'if accelerator == "cuda":\n'
        "    pass\n"
    )
    ported = port(source)
    code = "\n".join(line for line in ported.splitlines() if not line.lstrip().startswith("#"))
    assert '"npu"' not in code.replace('config = {"accelerator": "gpu", "device": "npu"}', "")
    assert 'default="cuda"' in code and 'accelerator = "cuda"' in code and 'accelerator == "cuda"' in code
    assert 'config = {"accelerator": "gpu", "device": "npu"}' in ported  # the device key is still a device
    assert "NPU800" in ported


def test_without_lightning_accelerator_stays_a_device_name() -> None:
    assert 'accelerator = "npu"' in port('import torch\naccelerator = "cuda"\n')


def test_lm_eval_device_gets_one_rewrite_not_two() -> None:
    handler = handler_for(Path("eval.py"))
    assert handler is not None
    text = 'import lm_eval\nr = lm_eval.simple_evaluate(model="hf", device="cuda")\n'
    result = handler.port(text.encode(), Selection(), PortOptions())
    assert result.new_text is not None and 'device="npu:0"' in result.new_text
    assert [f.rule.id for f in result.findings if f.rule.id != "NPU100"] == ["NPU806"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("trainer:\n  accelerator: cuda\n", "NPU623"),
        ("trainer:\n  accelerator: gpu\n", "NPU623"),
        ("trainer:\n  accelerator: auto\n", "NPU623"),
        ("trainer:\n  accelerator: cpu\n", None),
    ],
)
def test_yaml_lightning_accelerator_gets_a_todo(text: str, expected: str | None) -> None:
    ported = port(text, "config.yaml")
    assert "accelerator: npu" not in ported
    assert (expected in ported) if expected else ported == text


def test_deepspeed_comm_backend_name() -> None:
    ported = port('{"comm_backend_name": "nccl", "train_batch_size": 8}\n', "ds_config.json")
    assert '"comm_backend_name": "hccl"' in ported


@pytest.mark.parametrize(
    "texts, expected",
    [
        (["transformers==4.46.3\ntorch>=2.1\n"], "4.46.3"),
        (['dependencies = ["transformers>=4.57.0", "accelerate"]'], "4.57.0"),
        (['install_requires=["transformers[torch]~=4.51"]', "transformers>=4.56.0\n"], "4.51"),
        (["transformers\nsentence-transformers==3.0.0\n"], None),
        (["# transformers is optional\n"], None),
    ],
)
def test_transformers_pin(texts: list[str], expected: str | None) -> None:
    assert library_support.transformers_pin(texts) == expected


FLASH = (
    'from transformers import AutoModel\nm = AutoModel.from_pretrained("x", attn_implementation="flash_attention_2")\n'
)


@pytest.mark.parametrize(
    "requirements, todo",
    [
        (None, True),
        ("transformers==4.46.0\n", True),
        ("transformers>=4.56.0\n", False),
        ("transformers>=4.56\n", False),
    ],
)
def test_flash_attention_2_follows_the_pinned_transformers(tmp_path: Path, requirements: str | None, todo: bool):
    from ascend_port.run.engine import RunConfig, run

    (tmp_path / "train.py").write_text(FLASH)
    if requirements is not None:
        (tmp_path / "requirements.txt").write_text(requirements)
    result = run([tmp_path], RunConfig(jobs=1, cache=False))
    messages = [f.message for file in result.files for f in file.findings if f.rule.id == "NPU803"]
    assert bool(messages) is todo
    if requirements and todo:
        assert "requirements allow transformers 4.46.0" in messages[0]


@pytest.mark.parametrize("name, row", [("pytorch-lightning", "lightning"), ("mmcv-full", "mmcv")])
def test_other_distribution_names_share_the_row(name: str, row: str) -> None:
    package = packages.lookup(name)
    assert package is not None and package.status == library_support.library(row).status


def test_a_library_is_not_told_to_drop_itself(tmp_path: Path) -> None:
    """Liger-Kernel's own modules import liger_kernel: no NPU504 TODO and no NPU411 guard on those imports (the run
    found 78 TODOs and 106 guards on Liger-Kernel 0.5.10, every module of its own turned to None on an NPU host); a
    project that only uses the library still gets both."""
    from ascend_port.run.engine import RunConfig, run

    files = {
        "liger_kernel/__init__.py": "",
        "liger_kernel/ops/__init__.py": "",
        "liger_kernel/ops/utils.py": "import torch\n\n\ndef ensure(x):\n    return x.contiguous()\n",
        "liger_kernel/ops/norm.py": (
            "import torch\n\nfrom liger_kernel.ops.utils import ensure\n\n\ndef norm(x):\n    return ensure(x.cuda())\n"
        ),
        "train.py": "from liger_kernel.ops.utils import ensure\n\n\ndef step(x):\n    return ensure(x.cuda())\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, "utf-8")
    results = {Path(f.path).name: f for f in run([tmp_path / "liger_kernel"], RunConfig(cache=False)).files}
    norm = results["norm.py"]
    assert {f.rule.id for f in norm.findings} == {"NPU101", "NPU100"}  # (its .cuda() is still ported)
    assert norm.new_bytes is not None and b"try:" not in norm.new_bytes
    user = {f.rule.id for f in run([tmp_path / "train.py"], RunConfig(cache=False)).files[0].findings}
    assert {"NPU504", "NPU411"} <= user
