"""The distributed and precision rules on real code: every module of accelerate 1.15.0, a library that calls
torch.distributed, NCCL variables, GradScaler and autocast all over.

The wheel is downloaded once with pip into the repository's git-ignored ``.cache/corpora/`` and reused after that.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

import pytest

from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for
from ascend_port.run.engine import RunConfig, run

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

# The machinery on real code, as for an NPU-only fork (`--other-devices drop`): these projects also run on
# other devices, so by default their CUDA code is reported, not rewritten (python/device_model.py).
NPU_ONLY = PortOptions(other_devices="drop")

PACKAGE, VERSION = "accelerate", "1.15.0"

# Rules that must fire on this exact version (each was checked against its source by hand):
#   state.py `self.backend == "nccl"` (NPU202), `backend = "nccl"` and `"cuda:nccl,cpu:gloo"` (NPU201),
#   commands/launch.py `NCCL_P2P_DISABLE` (NPU209). (utils/modeling.py's `torch.amp.GradScaler("cuda")` is the last
#   branch of a dispatch that already has an `is_npu_available()` branch: it stays CUDA, so NPU300 does not fire.)
EXPECTED = {"NPU201", "NPU202", "NPU209"}


def accelerate_sources() -> Path:
    """The unpacked wheel, downloaded on first use (benchmarks/corpora.py, shared with the other real-code tests)."""
    return corpora.fetch(PACKAGE, VERSION)


@pytest.mark.slow
def test_port_of_accelerate_is_clean_and_idempotent() -> None:
    sources = accelerate_sources()
    result = run([sources / PACKAGE], RunConfig(jobs=2, options=NPU_ONLY))

    assert len(result.files) > 50, "the wheel should hold the whole package"
    assert not result.errors, [(f.path, f.error) for f in result.errors]
    assert result.changed, "the port changed nothing"
    for file in result.changed:
        ast.parse(file.new_bytes, filename=file.path)  # every changed file parses
        handler = handler_for(Path(file.path))
        again = handler.port(file.new_bytes, Selection(), PortOptions())
        assert again.new_text is None, f"a second port of {file.path} changes it again"

    fired = Counter(f.rule.id for file in result.files for f in file.findings)
    assert EXPECTED <= set(fired), f"expected rules that did not fire: {sorted(EXPECTED - set(fired))}"
