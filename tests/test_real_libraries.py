"""Issue 16 section 1 on real code: litgpt 0.5.13 (Lightning Fabric everywhere, bitsandbytes quantization), the
project where the port used to write 22 Lightning `accelerator="npu"` hunks that Lightning rejects.

The wheel is downloaded once into .cache/corpora (benchmarks/corpora.py), never installed or imported; the test
skips when it cannot be downloaded.
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from ascend_port.core.options import PortOptions
from ascend_port.run.engine import RunConfig, run

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

LITGPT = ("litgpt", "0.5.13")
# What the port writes where Lightning gets a device: never "npu", in a call or in a variable passed to it.
NPU_ACCELERATOR = re.compile(r"""accelerator\s*=\s*["']npu""")


@cache
def ported() -> dict[str, tuple[str, str, list[str]]]:
    """path -> (original, ported, rule IDs of the findings) for every file of litgpt."""
    try:
        root = corpora.fetch(*LITGPT)
    except (subprocess.CalledProcessError, OSError) as error:
        pytest.skip(f"cannot download litgpt: {error}")
    tree = (root / "litgpt").resolve()
    result = run([tree], RunConfig(jobs=2, cache=False))
    files = {}
    for file in result.files:
        path = Path(file.path).resolve()
        original = path.read_text("utf-8")
        new = original if file.new_bytes is None else file.new_bytes.decode("utf-8")
        files[path.relative_to(tree).as_posix()] = (original, new, [f.rule.id for f in file.findings])
    return files


@pytest.mark.slow
def test_litgpt_never_gets_a_lightning_npu_accelerator() -> None:
    offenders = [path for path, (_, new, _) in ported().items() if NPU_ACCELERATOR.search(new)]
    assert not offenders


@pytest.mark.slow
def test_litgpt_fabric_calls_get_the_lightning_todo() -> None:
    files = ported()
    count = sum(rules.count("NPU800") for _, _, rules in files.values())
    assert count >= 15  # 17 with 0.5.13: every Fabric set-up (cuda, a variable, or the default "auto")
    original, new, _ = files["generate/sequentially.py"]
    call = 'L.Fabric(devices=1, precision=precision, accelerator="cuda", plugins=plugins)'
    assert call in original and call in new
    assert '# TODO(ascend-port): NPU800 [low] accelerator="cuda"' in new


@pytest.mark.slow
def test_litgpt_cuda_only_lightning_and_bitsandbytes_are_flagged() -> None:
    files = ported()
    assert sum(rules.count("NPU801") for _, _, rules in files.values()) >= 10  # BitsandbytesPrecision, CUDAAccelerator
    assert sum(rules.count("NPU804") for _, _, rules in files.values()) >= 5  # bnb.optim.PagedAdamW, bnb.nn.*
    _, new, _ = files["api.py"]
    assert "NPU801 [low] BitsandbytesPrecision" in new


@pytest.mark.slow
def test_litgpt_port_is_idempotent() -> None:
    for path, (_, new, rules) in ported().items():
        if not rules:
            continue
        again = run_text(path, new)
        assert again is None, path


def run_text(path: str, text: str) -> str | None:
    from ascend_port.core.selection import Selection
    from ascend_port.port.handlers import handler_for

    handler = handler_for(Path(path))
    assert handler is not None
    result = handler.port(text.encode("utf-8"), Selection(), PortOptions())
    return result.new_text


MMDET = ("mmdet", "2.28.2")  # mmcv 1.x user: MMDataParallel in its tools, an NPU-aware build_dp in its utils


@cache
def mmdet_findings() -> dict[str, list[str]]:
    try:
        root = corpora.fetch(*MMDET)
    except (subprocess.CalledProcessError, OSError) as error:
        pytest.skip(f"cannot download mmdet: {error}")
    tree = (root / "mmdet").resolve()
    result = run([tree], RunConfig(jobs=2, cache=False))
    return {
        Path(file.path).resolve().relative_to(tree).as_posix(): [f.rule.id for f in file.findings]
        for file in result.files
    }


@pytest.mark.slow
def test_mmdet_tools_get_the_npu_wrappers_and_build_dp_is_left_alone() -> None:
    findings = mmdet_findings()
    assert "NPU805" in findings[".mim/tools/deployment/test.py"]
    assert "NPU805" in findings[".mim/tools/analysis_tools/test_robustness.py"]
    # build_dp/build_ddp import mmcv.device.npu themselves when the device is npu
    assert "NPU805" not in findings.get("utils/util_distribution.py", [])
