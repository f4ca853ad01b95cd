"""Module facts are computed once per module (issue 27): the rules' questions about the whole module (the extensions
it builds, the names its functions put on the device, the uses of its imports, the devices its code names) must
not cost a walk of the module per chunk or per node. The test counts the ``ast`` nodes every walk of the port visits
on a module of N units and on one of 2N: it doubles when each fact is read once per module, and it quadruples when
one is read per chunk (what the port did before: 12 million ``ast.walk`` steps on diffusers)."""

from __future__ import annotations

import ast

import pytest

from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port import python as port_python
from ascend_port.python import device_model, module_facts, names
from ascend_port.python.module_facts import ModuleFacts, spans_any

HEAD = """\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load
from flash_attn import flash_attn_func

ops = load("ops", ["ops.cu"], verbose=True)
"""

# One unit: a function and a class with what each fact is asked about (a call of an extension's op, a double on a
# name put on the device, a flash-attn call, a device chain with another vendor, an index from current_device()).
UNIT = """

def step_{i}(batch, model, q, k, v):
    x = batch.cuda()
    y = x.double()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    elif torch.xpu.is_available():
        torch.xpu.synchronize()
    index = torch.cuda.current_device()
    z = torch.zeros(3, device=index)
    out = ops.scale(y) + flash_attn_func(q, k, v, causal=True)
    return model(x).to("cuda"), out, z


class Block{i}(nn.Module):
    def forward(self, x):
        dtype = torch.float16 if x.device.type == "cuda" else torch.bfloat16
        return x.cuda().to(dtype)
"""


def _source(units: int) -> str:
    return HEAD + "".join(UNIT.format(i=i) for i in range(units))


class _Visits:
    """Counts the nodes the port's walks of Python's ``ast`` visit (ast.walk, NodeVisitor, the facts' walks)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.nodes = 0
        self.module_walks = 0
        original_children = ast.iter_child_nodes
        original_walk = device_model.walk_with_parents
        original_statements = names.walk_statements

        def children(node: ast.AST):
            self.nodes += 1
            return original_children(node)

        def walk_with_parents(tree: ast.AST):
            self.module_walks += isinstance(tree, ast.Module)  # (the device model walks single statements)
            order, parents = original_walk(tree)
            self.nodes += len(order)
            return order, parents

        def walk_statements(tree: ast.AST):
            for node in original_statements(tree):
                self.nodes += 1
                yield node

        monkeypatch.setattr(ast, "iter_child_nodes", children)
        for module in (device_model, module_facts):
            monkeypatch.setattr(module, "walk_with_parents", walk_with_parents)
        for module in (names, module_facts):
            monkeypatch.setattr(module, "walk_statements", walk_statements)

    def port(self, text: str) -> str:
        self.nodes = self.module_walks = 0
        outcome = port_python.port_source(text, Selection(), PortOptions())
        assert outcome.new_text is not None
        return outcome.new_text


def test_the_port_walks_a_module_in_time_linear_in_its_size(monkeypatch: pytest.MonkeyPatch) -> None:
    visits = _Visits(monkeypatch)
    small_text = visits.port(_source(20))
    small, small_walks = visits.nodes, visits.module_walks
    large_text = visits.port(_source(40))
    large = visits.nodes
    # The port did its work on every unit: each fact was asked and answered.
    for text, units in ((small_text, 20), (large_text, 40)):
        assert text.count("is an op of the CUDA extension ops") == units  # extension_modules (NPU502)
        assert text.count("NPU303 [low] double precision on the NPU") == units  # the names put on the device
        assert text.count('torch.device("npu", index)') == units  # the function's device indices (NPU210)
        assert text.count('elif hasattr(torch, "npu") and torch.npu.is_available():') == units  # the device model
        assert text.count("+ _npu_flash_attn(q, k, v, causal=True)") == units  # flash-attn's uses (NPU400)
    # Twice the module, twice the visits (some slack for the head); a fact read per chunk made it four times.
    assert large <= 2.3 * small, (small, large)
    # the facts walk the module once, and NPU408's file step the ported module once (the device model walks each
    # statement that names a device, once)
    assert small_walks <= 2 and visits.module_walks <= 2


def test_facts_are_computed_once_per_module_and_shared_by_its_chunks() -> None:
    calls: list[int] = []

    def fact(facts: ModuleFacts) -> int:
        calls.append(1)
        return len(facts.statements(ast.FunctionDef))

    tree = ast.parse(_source(3))
    facts = ModuleFacts(tree, names.ImportIndex.from_ast(tree), _source(3))
    assert facts.get(fact) == facts.get(fact) == 6  # three step_ functions, three forward methods
    assert calls == [1]
    assert [n.name for n in facts.statements(ast.ClassDef)] == ["Block0", "Block1", "Block2"]
    assert {n.id for n in facts.nodes(ast.Name)} >= {"ops", "flash_attn_func", "batch"}
    call = facts.nodes(ast.Call)[0]
    assert isinstance(facts.parent(call), ast.Assign)  # `ops = load(...)`
    assert facts.walks == 1


def test_the_facts_of_a_module_that_cannot_be_read_are_empty() -> None:
    facts = ModuleFacts(lambda: None, names.ImportIndex())
    assert facts.tree is None and facts.head is None
    assert facts.nodes(ast.Call) == [] and facts.statements(ast.Assign) == [] and facts.parent(ast.Pass()) is None


def test_lines_with_and_spans_any() -> None:
    text = "a = 1\nif x:\n    y = t.cuda()\nz = 2\n"
    tree = ast.parse(text)
    facts = ModuleFacts(tree, names.ImportIndex(), text)
    lines = facts.lines_with("cuda")
    assert lines == [3]
    assert [spans_any(s, lines) for s in tree.body] == [False, True, False]
    assert ModuleFacts(tree, names.ImportIndex()).lines_with("cuda") is None  # no source: every line counts
    assert spans_any(tree.body[0], None)


def test_subtree_devices_match_devices_in() -> None:
    tree = ast.parse(_source(2) + '\nif dev == "npu:0" or IS_HPU:\n    import torch_npu\n')
    devices = device_model.SubtreeDevices.of(tree)
    for node in ast.walk(tree):
        assert devices(node) == device_model.devices_in(node), ast.dump(node)[:80]
    wrapper = ast.Module(body=tree.body[-1:], type_ignores=[])  # a node from outside the module is read
    assert devices(wrapper) == {"npu", "hpu"}
    assert devices.probes(tree) is False


def test_a_module_that_names_no_other_device_has_an_empty_model_without_its_tree() -> None:
    cuda_only = "import torch\nx = torch.zeros(2).cuda()\nif torch.cuda.is_available():\n    y = 1\n"
    assert not device_model.may_keep_anything(cuda_only)
    assert device_model.may_keep_anything(cuda_only + "z = torch.xpu.device_count()\n")
    assert device_model.may_keep_anything(cuda_only + 'table = {"cuda": 1, "cpu": 2}\n')  # a CUDA/CPU dispatch
    assert device_model.may_keep_anything(cuda_only + '@custom_op("a::b", device_types="cuda")\ndef f(): ...\n')
    assert device_model.may_keep_anything(cuda_only + "def _hpu_init():\n    pass\n")
    assert device_model.may_keep_anything(cuda_only + "class MPSBackend:\n    pass\n")
