"""The port of a real CUDA-heavy distribution: completes, every changed file parses, a second run is a no-op."""

from __future__ import annotations

import ast
import sys
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


@pytest.mark.slow
def test_transformers_port_is_clean_and_idempotent() -> None:
    root = corpora.fetch(*corpora.TRANSFORMERS)
    result = run([root], RunConfig(jobs=2, options=NPU_ONLY))
    assert len(result.files) == 2860
    assert not result.errors, [(f.path, f.error) for f in result.errors]
    assert len(result.changed) >= 50  # transformers has CUDA code in dozens of modules
    fired = {f.rule.id for file in result.files for f in file.findings}
    assert {"NPU100", "NPU101", "NPU103", "NPU106", "NPU108"} <= fired
    options = NPU_ONLY  # (the second port is of the same fork)
    for file in result.changed:
        ast.parse(file.new_bytes, filename=file.path)
        again = handler_for(Path(file.path)).port(file.new_bytes, Selection(), options)
        assert again.new_text is None or again.source.encode(again.new_text) == file.new_bytes, file.path
