"""Issue 18, NPU505 on real code: Megatron-core 0.12.0 imports apex's FusedAdam/FusedSGD as `Adam`/`SGD` (after
Transformer Engine's, in try/except) and builds them with `adam_w_mode` and flags from its config, and its
distributed optimizer loads optimizer state dicts: nothing there may become torch.optim (the calls do not map, and
an apex checkpoint keeps `step` per param group), and each apex import keeps its NPU506 TODO.

The sdist is downloaded once into the git-ignored .cache/corpora (benchmarks/corpora.py), never built or imported.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

NAME, VERSION = "megatron-core", "0.12.0"
NPU_ONLY = PortOptions(other_devices="drop")  # as an NPU-only fork would port it: rewrites, not reports


def megatron_optimizer() -> Path:
    try:
        root = corpora.fetch(NAME, VERSION, sdist=True)
    except (subprocess.CalledProcessError, OSError) as error:
        pytest.skip(f"cannot download {NAME} {VERSION}: {error}")
    return root / "megatron_core-0.12.0" / "megatron" / "core" / "optimizer"


@pytest.mark.parametrize("name", ["__init__.py", "distrib_optimizer.py"])
def test_megatron_apex_optimizers_stay_apex_with_a_todo(name: str) -> None:
    path = megatron_optimizer() / name
    result = handler_for(path).port(path.read_bytes(), Selection(), NPU_ONLY)
    original = result.source.text
    ported = result.new_text if result.new_text is not None else original
    assert "from apex.optimizers import FusedAdam as Adam" in original
    assert ported.count("from apex.optimizers import") == original.count("from apex.optimizers import")
    assert "torch.optim.AdamW(" not in ported and "torch.optim.SGD(" not in ported
    assert not [f for f in result.findings if f.rule.id == "NPU505"]
    todos = [f for f in result.findings if f.rule.id == "NPU506" and "apex FusedAdam" in f.message]
    assert todos, result.findings
