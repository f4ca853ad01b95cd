"""Issue 16 section 2 on real code: flash-attn's availability gates where a guarded call is NOT ported.

DeepSpeed 0.19.8's FPDT layer (deepspeed/sequence/fpdt_layer.py) guards `import flash_attn` and the private
`_flash_attn_forward/_backward` kernels with try/except, and compares `flash_attn.__version__` where it calls them.
Those kernels have no NPU port: the version check must keep reading flash-attn (never the pinned release string of
NPU408), the guard must stay, and NPU411 must not wrap it a second time. (InternVL, Wan2.1 and Open-Sora, where the
ported gates occur, are not on PyPI: their numbers are in the report of this change, the patterns in golden/NPU408,
golden/NPU410 and golden/NPU411.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for
from ascend_port.rules.attention.unused_imports import FLASH_VERSION

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

NPU_ONLY = PortOptions(other_devices="drop")  # as for an NPU-only fork (DeepSpeed also runs elsewhere)


@pytest.mark.slow
def test_fpdt_version_check_and_guard_stay() -> None:
    try:
        root = corpora.fetch(*corpora.DEEPSPEED, sdist=True)
    except Exception as error:  # offline and not cached
        pytest.skip(f"deepspeed {corpora.DEEPSPEED[1]} sdist unavailable: {error}")
    path = next(root.glob("*/deepspeed/sequence/fpdt_layer.py"))  # (the sdist unpacks into deepspeed-VERSION/)
    source = path.read_text(encoding="utf-8")
    ported = handler_for(path).port(source.encode(), Selection(), NPU_ONLY)
    text = ported.new_text if ported.new_text is not None else source
    assert "flash_attn_version = version.parse(flash_attn.__version__)" in text
    assert FLASH_VERSION not in text
    assert text.count("try:") == source.count("try:")
    rules = {f.rule.id for f in ported.findings}
    assert "NPU409" in rules and "NPU411" not in rules
