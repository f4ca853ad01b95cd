"""The per-release lists of aten ops with an NPU kernel (ascend_port/data/torch_npu_kernels.json, extracted from the
torch-npu wheels by scripts/extract_npu_kernels.py) and how the hazard report judges op statistics against them."""

from __future__ import annotations

import json
import re

from ascend_port.core import npu_api
from ascend_port.emulate import hazards


def test_every_covered_release_is_listed_with_its_wheel():
    covered = {r.version: r for r in npu_api.releases()}
    sources = hazards.sources()
    assert list(sources) == list(covered)
    data = json.loads(hazards.KERNELS_JSON.read_text("utf-8"))
    assert data["not_downloaded"] == []
    releases = json.loads((hazards.KERNELS_JSON.parent / "torch_npu_releases.json").read_text("utf-8"))["releases"]
    for release in releases:
        assert sources[release["version"]] == {"wheel": release["wheel"], "sha256": release["sha256"]}
        assert re.fullmatch(r"[0-9a-f]{64}", sources[release["version"]]["sha256"])


def test_known_ops_and_the_ones_that_changed():
    kernels = hazards.kernels_by_release()
    for version, names in kernels.items():
        assert {"add.Tensor", "mm", "_softmax", "native_layer_norm", "copy_"} <= names, version
        assert 900 < len(names) < 1300, version
        assert not any("(" in name or "::" in name for name in names)
    # logit: a kernel in 2.1.0.post17, none in 2.2.0.post2-2.4.0.post4, back from 2.5.1.post1 (as the wheels say)
    assert [("logit" in names) for names in kernels.values()][:5] == [True, False, False, False, True]
    assert not any("digamma" in names for names in kernels.values())


def test_data_is_small():
    assert hazards.KERNELS_JSON.stat().st_size < 300_000


def test_structured_ops_reach_their_out_kernel():
    kernels = frozenset({"gelu.out", "pow.Tensor_Scalar_out", "add.Tensor"})
    assert hazards.has_kernel("gelu", kernels) and hazards.has_kernel("gelu_", kernels)
    assert hazards.has_kernel("pow.Tensor_Scalar", kernels) and hazards.has_kernel("add_.Tensor", kernels)
    assert not hazards.has_kernel("digamma", kernels) and not hazards.has_kernel("pow.Scalar", kernels)


def test_judge_sections():
    stats = hazards.merge(
        [
            {
                "aten::digamma": {"calls": 2, "shapes": 1, "dtypes": {}},
                "aten::mm": {"calls": 9, "shapes": 9, "late_shapes": 4},
                "aten::add.Tensor": {"calls": 90, "shapes": 30, "late_shapes": 0},  # a model's many fixed shapes
            },
            {
                "aten::digamma": {"calls": 1, "shapes": 1, "dtypes": {"Double": 1}},
                "aten::mm": {"calls": 3, "shapes": 3, "late_shapes": 1},
                "aten::empty_strided": {"calls": 1, "shapes": 0, "dtypes": {"ComplexFloat": 1}},
                "c10d::allreduce_": {"calls": 1, "shapes": 1},
            },
        ]
    )
    judged = hazards.judge(stats, "2.14.0", {"set_compile_mode"})
    assert judged["cpu_fallbacks"] == {"aten::digamma": {"calls": 3, "advice": hazards.ON_HOST}}
    assert judged["dtype_substitutions"] == {
        "aten::digamma float64": {"calls": 1, "advice": hazards.FLOAT64_ADVICE},
        "aten::empty_strided complex64 (created on / moved to the npu)": {"calls": 1, "advice": hazards.COMPLEX_ADVICE},
    }
    assert judged["dynamic_shapes"]["aten::mm"]["shapes"] == 9  # the most one process saw
    assert set(judged["dynamic_shapes"]) == {"aten::mm"}
    assert "set_compile_mode" in judged["dynamic_shapes"]["aten::mm"]["advice"]
    without = hazards.judge(stats, "2.14.0", set())
    assert "set_compile_mode" not in without["dynamic_shapes"]["aten::mm"]["advice"]
    capped = hazards.judge({"aten::mm": {"calls": 99, "shapes": hazards.SHAPES_KEPT}}, "2.14.0", set())
    assert capped["dynamic_shapes"]["aten::mm"]["message"].endswith(f"{hazards.SHAPES_KEPT}+ shapes")


def test_no_hazard_no_summary_lines():
    assert hazards.summary_lines({"torch_npu": "2.14.0", **{s: {} for s in hazards.SECTIONS}}) == []
