"""NPU100 where a rewrite needs it: a port that calls ``torch_npu.`` always imports it, whatever ``--select``,
``--ignore`` or an ``ignore-file[NPU100]`` comment leave out (the module would raise NameError at its first call
otherwise); one whose rewrites reach only ``torch.npu`` (autoloaded) follows the selection."""

from __future__ import annotations

import ast

import pytest

from ascend_port.core.selection import Selection
from ascend_port.port.python import port_source

FUSED = """\
import torch
from flash_attn import flash_attn_func


def attend(q, k, v):
    return flash_attn_func(q, k, v, causal=True)
"""
RENAME_ONLY = "import torch\nx = torch.ones(2).cuda()\n"


def _binds_torch_npu(text: str) -> bool:
    tree = ast.parse(text)
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    return "torch_npu" in imported


def _uses_torch_npu(text: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "torch_npu" for n in ast.walk(ast.parse(text)))


@pytest.mark.parametrize(
    "selection, source",
    [
        (Selection(ignore=("NPU100",)), FUSED),
        (Selection(select=("NPU400",)), FUSED),
        (Selection(), "# ascend-port: ignore-file[NPU100]\n" + FUSED),
    ],
    ids=["ignored", "not-selected", "suppressed"],
)
def test_a_rewrite_that_calls_torch_npu_imports_it(selection: Selection, source: str) -> None:
    outcome = port_source(source, selection)
    assert outcome.new_text is not None and _uses_torch_npu(outcome.new_text)
    assert _binds_torch_npu(outcome.new_text)
    assert "NPU100" in {f.rule.id for f in outcome.findings}


def test_a_rename_to_torch_npu_follows_the_selection() -> None:
    """Must not change: `.npu()` needs no name bound; with NPU100 left out, no import is added."""
    outcome = port_source(RENAME_ONLY, Selection(ignore=("NPU100",)))
    assert outcome.new_text == "import torch\nx = torch.ones(2).npu()\n"
    assert "NPU100" not in {f.rule.id for f in outcome.findings}
