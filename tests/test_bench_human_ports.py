"""The human-ports benchmark (benchmarks/bench_human_ports.py): how it counts the ops a port introduces, how it
matches the tool's port against the humans', its manifest, and its offline message. The pairs themselves are
third-party code in a gitignored cache: the benchmark is run by hand, not here."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import bench_human_ports as bench
from human_ops import construct_of, module_ops


def _ops(text: str) -> dict[tuple[str, str], int]:
    return dict(module_ops(textwrap.dedent(text)).uses)


def test_ops_are_found_through_the_imports_and_counted_per_function() -> None:
    ops = _ops(
        """
        import torch
        import torch_npu as tn
        from torch_npu import npu_rms_norm as rms
        from apex.optimizers import NpuFusedAdamW
        from npu_fused_adamw import NpuFusedAdamW as VendoredAdamW  # a project's copy of the optimizer
        import torch_npu.optim

        class Block:
            def forward(self, x, w):
                x = tn.npu_fusion_attention(x, x, x, 8, "BSND")[0]
                return rms(x, w)[0] + torch.npu_confusion_transpose(x, (0, 2, 1), x.shape, False)

        def make(params):
            def inner():
                return torch_npu.optim.NpuFusedSGD(params)
            torch_npu.npu.synchronize()  # the device API is not an op
            return NpuFusedAdamW(params), VendoredAdamW(params), inner
        """
    )
    assert ops == {
        ("Block.forward", "npu_fusion_attention"): 1,
        ("Block.forward", "npu_rms_norm"): 1,
        ("Block.forward", "npu_confusion_transpose"): 1,
        ("make", "NpuFusedAdamW"): 2,
        ("make.inner", "NpuFusedSGD"): 1,
    }


def test_names_that_merely_look_like_ops_are_not_counted() -> None:
    ops = _ops(
        """
        import torch
        npu_fusion_attention = None  # a local name, not the op
        s = "torch_npu.npu_rms_norm"  # a string
        def f(x):
            return npu_fusion_attention(x), x.npu_format_cast, torch.nn.functional.softmax(x, -1)
        """
    )
    assert ops == {}


def test_torchair_contrib_and_npu_compile_are_ops() -> None:
    ops = _ops(
        """
        import torch, torchair
        from torch_npu.contrib.module import NpuPreGenDropout
        def main(model):
            NpuPreGenDropout.enable_dropout_ensemble(model)
            model = torch.compile(model, backend=torchair.get_npu_backend())
            return torch.compile(model, backend="npu")
        """
    )
    assert ops == {
        ("main", "NpuPreGenDropout"): 1,
        ("main", "torchair.get_npu_backend"): 1,
        ("main", "compile(backend=npu)"): 1,
    }


def test_torch_s_own_fused_optimizers_are_ops_when_fused_is_asked_for() -> None:
    ops = _ops(
        """
        import torch
        from torch import optim
        def make(params, on_npu):
            a = torch.optim.AdamW(params, fused=True)
            b = optim.SGD(params, lr=0.1, fused=on_npu)  # chosen at run time: still the fused kernel on the NPU
            c = torch.optim.adam.Adam(params, fused=None)  # torch's default: not fused
            d = torch.optim.AdamW(params, fused=False)
            return a, b, c, d, torch.optim.RMSprop(params, foreach=True)
        """
    )
    assert ops == {("make", "torch.optim.AdamW(fused)"): 1, ("make", "torch.optim.SGD(fused)"): 1}
    assert construct_of("torch.optim.AdamW(fused)") == ("fused optimizer", True)


def test_an_op_that_does_the_human_op_s_work_reproduces_it_and_is_named() -> None:
    upstream = "import torch\ndef make(p):\n    return torch.optim.AdamW(p)\n"
    human = "import torch_npu\ndef make(p):\n    return torch_npu.optim.NpuFusedAdamW(p)\n"
    by_torch = "import torch\ndef make(p):\n    return torch.optim.AdamW(p, fused=True)\n"
    other_class = "import torch\ndef make(p):\n    return torch.optim.SGD(p, fused=True)\n"
    pair = {
        "id": "t",
        "model": "m",
        "upstream": {"pypi": "x==1", "path": "a.py"},
        "port": {"pypi": "x==2", "path": "a.py"},
    }
    [found] = bench.measure(pair, upstream, human, by_torch).introductions
    assert (found.op, found.reproduced, found.by) == ("NpuFusedAdamW", True, "torch.optim.AdamW(fused)")
    assert bench.measure(pair, upstream, human, other_class).introductions[0].reproduced is False
    text = bench.report([bench.measure(pair, upstream, human, by_torch)], "abc1234")
    assert "**Fused ops reproduced: 1/1 (100 %)** (by the humans' own op: 0/1 (0 %))" in text
    assert "yes, by torch.optim.AdamW(fused)" in text


def test_constructs() -> None:
    assert construct_of("npu_fusion_attention") == ("attention", True)
    assert construct_of("npu_rotary_mul") == ("RoPE", True)
    assert construct_of("NpuFusedAdamW") == ("fused optimizer", True)
    assert construct_of("npu_scaled_masked_softmax") == ("masked softmax", True)
    assert construct_of("npu_format_cast") == ("format cast (layout, not fused)", False)
    assert construct_of("npu_bmmV2")[1] is False


UPSTREAM = """
import torch
import torch.nn.functional as F

def rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

def attend(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)
"""

PORT = """
import torch
import torch_npu

def rms(x, w):
    return torch_npu.npu_rms_norm(x, w)[0]

def attend(q, k, v):
    return npu_attention(q, k, v)

def npu_attention(q, k, v):
    return torch_npu.npu_fusion_attention(q, k, v, q.shape[1], "BNSD")[0]
"""


def _measure(tool: str, **pair: object) -> dict[tuple[str, str], bool]:
    result = bench.measure({"id": "t", **pair}, UPSTREAM, PORT, textwrap.dedent(tool))
    return {(i.function, i.op): i.reproduced for i in result.introductions}


def test_an_introduction_is_reproduced_only_in_its_own_function() -> None:
    tool_in_rms = "import torch_npu\ndef rms(x, w):\n    return torch_npu.npu_rms_norm(x, w)[0]\n"
    tool_elsewhere = "import torch_npu\ndef other(x, w):\n    return torch_npu.npu_rms_norm(x, w)[0]\n"
    assert _measure(tool_in_rms)[("rms", "npu_rms_norm")] is True
    assert _measure(tool_elsewhere)[("rms", "npu_rms_norm")] is False


def test_a_function_the_humans_added_is_matched_in_the_whole_file_unless_mapped() -> None:
    tool = """
        import torch_npu
        def _helper(q, k, v):
            return torch_npu.npu_fusion_attention(q, k, v, 8, "BNSD")[0]
        def attend(q, k, v):
            return _helper(q, k, v)
        """
    assert _measure(tool) == {("npu_attention", "npu_fusion_attention"): True, ("rms", "npu_rms_norm"): False}
    mapped = _measure(tool, function_map={"npu_attention": "attend"})
    assert mapped == {("attend", "npu_fusion_attention"): True, ("rms", "npu_rms_norm"): False}
    # The tool's helper is credited to its caller only: a helper nobody calls does not reproduce `attend`.
    uncalled = (
        "import torch_npu\ndef _helper(q, k, v):\n    return torch_npu.npu_fusion_attention(q, k, v, 8, 'BNSD')[0]\n"
    )
    assert _measure(uncalled, function_map={"npu_attention": "attend"})[("attend", "npu_fusion_attention")] is False


def test_an_only_mapped_pair_counts_only_the_mapped_functions() -> None:
    found = _measure("", function_map={"npu_attention": "attend"}, only_mapped=True)
    assert found == {("attend", "npu_fusion_attention"): False}


def test_the_report_gives_the_fractions_and_the_missing_by_construct() -> None:
    pair = {
        "id": "t",
        "model": "m",
        "upstream": {"pypi": "x==1", "path": "a.py"},
        "port": {"pypi": "x==2", "path": "a.py"},
    }
    result = bench.measure(
        pair, UPSTREAM, PORT, "import torch_npu\ndef rms(x, w):\n    return torch_npu.npu_rms_norm(x, w)[0]\n"
    )
    text = bench.report([result], "abc1234")
    assert "**Fused ops reproduced: 1/2 (50 %)** (by the humans' own op: 1/2 (50 %))" in text
    assert "| RMSNorm | yes | 1 | 1 | - |" in text
    assert "t: `npu_attention` npu_fusion_attention" in text


def test_the_manifest_pins_every_pair() -> None:
    manifest = json.loads(bench.MANIFEST.read_text("utf-8"))
    ids = [p["id"] for p in manifest["pairs"]]
    assert len(ids) == len(set(ids)) and 15 <= len(ids) <= 30
    for pair in manifest["pairs"]:
        for pin in (pair["upstream"], pair["port"]):
            assert pin["path"].endswith(".py")
            if "pypi" in pin:
                assert re.fullmatch(r"[\w.-]+==[\w.]+", pin["pypi"])
            else:
                assert re.fullmatch(r"[0-9a-f]{40}", pin["commit"]) and "/" in pin["github"]
        assert not pair.get("only_mapped") or pair["function_map"]


def test_offline_a_missing_file_is_named(tmp_path: Path) -> None:
    github = {"github": "someone/model", "commit": "0" * 40, "path": "model.py"}
    with pytest.raises(bench.Missing, match=r"someone/model@000000000000:model.py"):
        bench.pinned_text(github, tmp_path, tmp_path, offline=True)
    with pytest.raises(bench.Missing, match=r"PyPI pkg==1.0: not in"):
        bench.pinned_text({"pypi": "pkg==1.0", "path": "a.py"}, tmp_path, tmp_path, offline=True)


def test_the_tool_port_is_the_checkout_s_apply() -> None:
    source = "from flash_attn import flash_attn_func\n\ndef attend(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n"
    ported = bench.tool_port(source, "model.py")
    assert module_ops(ported).through_helpers().uses[("attend", "npu_fusion_attention")] >= 1
