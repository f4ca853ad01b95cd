"""NPU515's launch options and NPU516's torch core count on Liger-Kernel 0.5.10 (from PyPI: unpacked in
.cache/corpora, never installed or imported), whose ops launch untuned kernels with `num_warps=` and size persistent
grids by `torch.cuda.get_device_properties(X.device).multi_processor_count`.

The ops are ported with the two rules alone: the rewrites per rule are pinned, every ported file parses, a second
port changes nothing, and no `.multi_processor_count` is left.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import corpora

pytestmark = pytest.mark.slow

LIGER = ("liger-kernel", "0.5.10")
RULES = ("NPU515", "NPU516")
# Measured on liger-kernel 0.5.10: dyt, layer_norm and rms_norm read the SM count. 20 launches pass num_warps: 11 to
# an untuned kernel of their module (dropped); 7 to kernels imported from another module, and 2 to sparsemax's
# kernels, which take `num_warps: tl.constexpr` as an argument, stay.
EXPECTED = {"NPU515": 11, "NPU516": 3}


def test_launch_rewrites_on_liger_kernel() -> None:
    try:
        root = corpora.fetch(*LIGER) / "liger_kernel" / "ops"
    except (subprocess.CalledProcessError, OSError) as error:
        pytest.skip(f"cannot download {LIGER[0]} {LIGER[1]}: {error}")
    selection = Selection(select=RULES)
    counts: Counter[str] = Counter()
    for path in corpora.python_files(root):
        handler = handler_for(path)
        assert handler is not None
        result = handler.port(path.read_bytes(), selection, PortOptions())
        counts.update(f.rule.id for f in result.findings if f.applied)
        text = result.new_text
        if text is None:
            continue
        ast.parse(text)
        assert ".multi_processor_count" not in text, path
        assert handler.port(text.encode(), selection, PortOptions()).new_text is None, path
    assert dict(counts) == EXPECTED
