"""The attention helpers are a Python module of their own (rules/attention/helper_code/npu_attention.py), copied
into ported modules and adapted to each: its names, its credit, its private torch import, the MindIE-SD branch."""

from __future__ import annotations

import ast

import pytest

from ascend_port.rules.attention.helper_names import DEPENDS, FLASH_HELPER, MASK_CACHE, PRIVATE_TORCH, XFORMERS_HELPER
from ascend_port.rules.attention.helpers import CREDIT, SOURCE, helper_source


def test_the_module_defines_every_helper_the_rules_write_and_nothing_else() -> None:
    tree = ast.parse(SOURCE.read_text("utf-8"))
    functions = [s.name for s in tree.body if isinstance(s, ast.FunctionDef)]
    assigned = [t.id for s in tree.body if isinstance(s, ast.Assign) for t in s.targets if isinstance(t, ast.Name)]
    assert sorted(functions) == sorted(DEPENDS) and assigned == [MASK_CACHE]


@pytest.mark.parametrize("name", list(DEPENDS))
@pytest.mark.parametrize("torch", ["torch", "th", None])
def test_each_helper_is_written_with_the_module_s_names_and_its_credit(name: str, torch: str | None) -> None:
    source = helper_source(name, torch, "npu_ops", "torch_npu", "rule NPU400")
    tree = ast.parse(source)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert "torch_npu" not in names and CREDIT not in source and "(written by ascend-port, rule NPU400" in source
    private_import = f"import torch as {PRIVATE_TORCH}"
    if torch is None:
        assert (private_import in source) == (PRIVATE_TORCH in names)  # imported where used, and only there
    else:
        assert private_import not in source and PRIVATE_TORCH not in names
    assert "mindiesd" not in source
    assert (name == FLASH_HELPER) == source.startswith(f"{MASK_CACHE} = {{}}\n\n\ndef {FLASH_HELPER}(")


def test_a_renamed_callee_keeps_its_arguments_aligned_under_the_parenthesis() -> None:
    lines = helper_source(FLASH_HELPER, "torch", "npu", "torch_npu", "rule NPU400").splitlines()
    call = next(i for i, line in enumerate(lines) if "npu.npu_fusion_attention(" in line)
    assert lines[call + 1].index("keep_prob") == lines[call].index("(") + 1


def test_the_mindiesd_branch_is_written_for_its_backend_only() -> None:
    source = helper_source(FLASH_HELPER, "torch", "torch_npu", "mindiesd", "rule NPU400")
    assert "from mindiesd import attention_forward" in source
    assert "mindiesd" not in helper_source(XFORMERS_HELPER, "torch", "torch_npu", "mindiesd", "rule NPU400")
    with pytest.raises(ValueError, match="unknown attention backend"):
        helper_source(FLASH_HELPER, "torch", "torch_npu", "triton", "rule NPU400")
