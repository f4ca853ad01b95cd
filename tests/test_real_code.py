"""The port of a real CUDA-heavy distribution: completes, every changed file parses, a second run is a no-op."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for
from ascend_port.python import device_model
from ascend_port.run.engine import RunConfig, run

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora


@pytest.mark.slow
def test_transformers_port_is_clean_and_idempotent() -> None:
    root = corpora.fetch(*corpora.TRANSFORMERS)
    result = run([root], RunConfig(jobs=2))
    assert len(result.files) == 2860
    assert not result.errors, [(f.path, f.error) for f in result.errors]
    assert len(result.changed) >= 50  # transformers has CUDA code in dozens of modules
    fired = {f.rule.id for file in result.files for f in file.findings}
    assert {"NPU100", "NPU101", "NPU103", "NPU106", "NPU108"} <= fired
    # transformers supports the NPU already (is_torch_npu_available): the second port sees that too.
    assert device_model.supports_npu(str(p) for p in root.rglob("*.py"))
    options = {device_model.NPU_AWARE_OPTION: "1"}
    for file in result.changed:
        ast.parse(file.new_bytes, filename=file.path)
        again = handler_for(Path(file.path)).port(file.new_bytes, Selection(), options)
        assert again.new_text is None or again.source.encode(again.new_text) == file.new_bytes, file.path
