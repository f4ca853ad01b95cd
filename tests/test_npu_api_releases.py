"""The torch_npu API of every release (ascend_port/data/torch_npu_releases.json) and the release table.

The facts asserted here were read from the wheels on PyPI by ``scripts/extract_torch_npu_api.py --releases``; a new
extraction that changes one of them is a change of the data to look at, not a flaky test.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import zipfile
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import Version

from ascend_port.core import npu_api

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "extract_torch_npu_api.py"
# The file ships with the package: 15 releases take about 246 kB (the registered op schemas, what a call binds to,
# 150 kB of it; the docs' signatures 52 kB); a bound that leaves room for a few more releases, and catches a change of
# format that would bloat it.
MAX_BYTES = 300_000


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("extract_torch_npu_api", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve the module's annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def versions() -> list[str]:
    return [r.version for r in npu_api.releases()]


def test_the_release_table_is_ordered_and_each_release_requires_a_torch() -> None:
    releases = npu_api.releases()
    assert len(releases) >= 15
    assert [Version(r.version) for r in releases] == sorted(Version(r.version) for r in releases)
    assert versions()[0] == "2.1.0.post17" and "2.14.0" in versions()
    for release in releases:
        assert release.torch and release.torch.startswith("=="), release
        # torch-npu X.Y.Z[.postN] is built for torch X.Y.Z
        assert release.torch_version == Version(release.version).base_version, release
        assert release.python and all(tag.startswith("cp3") for tag in release.python), release
    # one release per torch version: the newest post release of each
    assert len({r.torch_version for r in releases}) == len(releases)
    assert {"2.1.0.post17", "2.5.1.post1", "2.7.1.post11", "2.9.0.post9", "2.9.1"} <= set(versions())


def test_the_torch_requirements_are_those_of_the_wheels_metadata() -> None:
    by_version = {r.version: r for r in npu_api.releases()}
    # x86_64 wheels up to 2.11 require the CPU build of torch; aarch64 ones (Ascend's hosts) the plain version
    assert by_version["2.1.0.post17"].torch == "==2.1.0+cpu"
    assert by_version["2.1.0.post17"].torch_aarch64 == "==2.1.0"
    assert by_version["2.5.1.post1"].torch == "==2.5.1+cpu"
    assert by_version["2.12.0.post3"].torch == "==2.12.0"
    assert by_version["2.14.0"].torch == "==2.14.0.*"
    # 2.2.0.post2 has no cp311 wheel: pinning it on Python 3.11 cannot be installed
    assert "cp311" not in by_version["2.2.0.post2"].python
    assert npu_api.release_for_torch("2.5.1").version == "2.5.1.post1"  # type: ignore[union-attr]
    assert npu_api.release_for_torch("2.1.0+cpu").version == "2.1.0.post17"  # type: ignore[union-attr]
    assert npu_api.release_for_torch("2.1.2") is None


def test_published_releases_list_every_version_on_pypi() -> None:
    published = npu_api.published_releases()
    names = [r.version for r in published]
    assert len(names) == len(set(names)) and set(versions()) <= set(names)
    assert [Version(v) for v in names] == sorted(Version(v) for v in names)
    # pins the port invented: torch-npu 2.1.2 and 2.7.0 do not exist, 2.7.1 does
    torch_versions = {r.torch_version for r in published}
    assert "2.1.2" not in torch_versions and "2.7.0" not in torch_versions and "2.7.1" in torch_versions
    assert not any(v.startswith(("2.1.2", "2.7.0")) for v in names)
    # the first wheels of 2.1.0 and 2.2.0 declare no torch at all
    assert next(r for r in published if r.version == "2.1.0").torch is None


def test_load_release_of_the_newest_equals_load() -> None:
    new, old = npu_api.load_release("2.14.0"), npu_api.load()
    assert new == old
    for field in ("npu", "ops", "optim", "profiler"):
        assert getattr(new, field) == getattr(old, field), field
    assert new.submodules.keys() == old.submodules.keys()
    for sub, public in old.submodules.items():
        assert new.submodules[sub] == public, sub


def test_mstx_is_in_every_release_but_its_range_push_is_new() -> None:
    # torch.npu.mstx (the class mstx of torch_npu/npu/mstx.py) is in every covered release, even 2.1.0.post17 ...
    assert npu_api.first_release("mstx") == "2.1.0.post17"
    assert all(npu_api.load_release(v).has("mstx") for v in versions())
    # ... but mstx.range_push / range_pop came with 2.7.1.post11, and the 2.8.0 and 2.9.1 branches never had them
    for method in ("range_push", "range_pop"):
        assert npu_api.first_release(method, "npu.mstx:mstx") == "2.7.1.post11"
        have = [v for v in versions() if method in npu_api.names("npu.mstx:mstx", v)]
        assert have == [
            "2.7.1.post11",
            "2.9.0.post9",
            "2.10.0.post7",
            "2.11.0.post3",
            "2.12.0.post3",
            "2.13.0",
            "2.14.0",
        ]
    assert "range_start" in npu_api.names("npu.mstx:mstx", "2.5.1.post1")
    assert "range_push" not in npu_api.names("npu.mstx:mstx", "2.5.1.post1")


def test_first_releases_of_notable_names() -> None:
    for op in ("npu_fusion_attention", "npu_rms_norm", "npu_rotary_mul", "npu_swiglu"):
        assert npu_api.first_release(op, "ops") == "2.1.0.post17", op
        assert all(op in npu_api.load_release(v).ops for v in versions()), op
    # npu_gemma_rms_norm: in 2.1.0.post17, not in the older 2.2.0.post2, in every release from 2.3.1.post6 on
    assert npu_api.first_release("npu_gemma_rms_norm", "ops") == "2.1.0.post17"
    assert "npu_gemma_rms_norm" not in npu_api.load_release("2.2.0.post2").ops
    assert npu_api.first_release("NpuFusedAdamW", "optim") == "2.1.0.post17"
    assert npu_api.first_release("ExternalStream") == "2.7.1.post11"
    assert npu_api.first_release("no_such_name") is None
    for name in ("get_device_capability", "is_bf16_supported"):
        assert all(npu_api.load_release(v).has(name) for v in versions()), name
    # torch.npu.utils.get_device_capability moved out of the utils module after 2.5 (torch.npu still has it)
    assert not npu_api.load_release("2.14.0").has_path("utils.get_device_capability")
    assert npu_api.load_release("2.5.1.post1").has_path("utils.get_device_capability")


def test_op_signatures_are_kept_where_they_changed() -> None:
    assert npu_api.op_signature("npu_rms_norm", "2.5.1.post1") == (
        "npu_rms_norm(Tensor self, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor)"
    )
    old, new = (npu_api.op_signature("npu_fusion_attention", v) for v in ("2.2.0.post2", "2.14.0"))
    assert old and new and "softmax_layout" not in old and 'str softmax_layout=""' in new
    assert npu_api.op_signature("no_such_op", "2.14.0") is None


def test_an_unknown_release_is_a_value_error_naming_the_covered_ones() -> None:
    with pytest.raises(ValueError, match=r"'9\.9\.9' is not a covered release; covered: 2\.1\.0\.post17, .*2\.14\.0"):
        npu_api.load_release("9.9.9")
    with pytest.raises(ValueError, match=r"2\.5\.1\.post1 is the covered release for torch 2\.5\.1"):
        npu_api.load_release("2.5.1")
    with pytest.raises(ValueError):
        npu_api.names("npu", "2.7.0")


def test_the_data_is_consistent_and_small() -> None:
    text = resources.files("ascend_port.data").joinpath(npu_api.RELEASES_FILE).read_text("utf-8")
    assert len(text.encode("utf-8")) < MAX_BYTES
    data = json.loads(text)
    count = len(data["releases"])
    for kind, members in data["names"].items():
        for name, runs in members.items():
            assert runs and len(runs) % 2 == 0, (kind, name)
            assert runs == sorted(runs) and 0 <= runs[0] and runs[-1] < count, (kind, name)
    for version in versions():
        api = npu_api.load_release(version)
        assert api.npu and api.ops and api.optim and api.profiler, version
        # a submodule's names are there only in the releases that have the submodule
        for kind in data["names"]:
            if kind.startswith("npu.") and ":" not in kind and npu_api.names(kind, version):
                assert kind.removeprefix("npu.") in api.submodules, (kind, version)


def test_the_extraction_helpers(script) -> None:
    assert script.ranges([0, 1, 2, 5, 6, 9]) == [0, 2, 5, 6, 9, 9]
    assert script.torch_requirement("Requires-Dist: numpy\nRequires-Dist: torch (==2.1.0+cpu)\n") == "==2.1.0+cpu"
    assert script.torch_requirement("Requires-Dist: torch==2.14.0.*\nRequires-Dist: pyyaml\n") == "==2.14.0.*"
    assert script.torch_requirement("Requires-Dist: pyyaml\n") is None
    doc = "\ntorch_npu.npu_x(Tensor self,\n    int k=1 ) -> Tensor\n\n示例\ny = torch_npu.npu_x(a, k=2)\n"
    assert script.doc_signature("npu_x", doc) == "npu_x(Tensor self, int k=1) -> Tensor"
    assert script.doc_signature("npu_x", "示例\ny = torch_npu.npu_x(a, k=2)\n") is None
    wheel = script.WheelFile("torch_npu-2.2.0.post2-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", "", "")
    assert (wheel.version, wheel.python, wheel.machine) == ("2.2.0.post2", "cp310", "x86_64")
    files = [
        script.WheelFile(f"torch_npu-{v}-cp311-cp311-manylinux_2_28_x86_64.whl", "", "")
        for v in ("2.9.0rc1", "2.9.0", "2.9.0.post2", "2.9.1")
    ]
    chosen, skipped = script.choose_releases(script.by_version(files))
    assert chosen == ["2.9.0.post2", "2.9.1"]
    assert skipped == {"2.9.0rc1": "pre-release", "2.9.0": "superseded by 2.9.0.post2 (same torch 2.9.0)"}


def test_the_ops_are_read_from_the_library_the_wheel_registers(script, tmp_path) -> None:
    """The schemas are string literals of torch_npu/lib/libtorch_npu.so: every public op of the npu namespace, the
    undocumented ones included; overloads name the op only; private ops and c10d's wrappers are left out."""
    library = (
        b"\x7fELF\x00\x01npu_gelu(Tensor self, *, str approximate='none') -> Tensor\x00junk\x00"
        b"npu_bmmV2(Tensor self, Tensor mat2, int[] output_sizes) -> Tensor\x00"
        b"npu_max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)\x00"
        b"_npu_dropout(Tensor self, float p) -> (Tensor, Tensor)\x00wrap_alltoallvc_inner(Tensor a) -> Tensor\x00"
        b"not a schema (x) -> y\x00"
    )
    path = tmp_path / "torch_npu-9.9.9-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr(script.LIBRARY, library)
    with zipfile.ZipFile(path) as wheel:
        assert script.registered_schemas(wheel) == {
            "npu_bmmV2": "npu_bmmV2(Tensor self, Tensor mat2, int[] output_sizes) -> Tensor",
            "npu_gelu": "npu_gelu(Tensor self, *, str approximate='none') -> Tensor",
            "npu_max": "",
        }


def _names_to_judge() -> list[str]:
    """A dotted name for every name of the data, each spelled where name_status reads it, plus a member no class
    has."""
    dotted = []
    for kind, known in npu_api._releases_data()["names"].items():
        module, _, cls = kind.partition(":")
        if cls:
            prefix = f"torch.npu.{cls}"
            dotted.append(f"{prefix}.not_a_member")
        elif kind in ("npu", "npu_submodules"):
            prefix = "torch.npu"
        elif kind.startswith("npu."):
            prefix = f"torch.npu.{kind[4:]}"
        elif kind in ("ops", "torch_npu"):
            prefix = "torch_npu"
        else:
            prefix = f"torch_npu.{kind}"
        dotted += [f"{prefix}.{name}" for name in known]
    return dotted


def test_every_name_a_release_lacks_spells_one_of_its_flaggable_words() -> None:
    # The port's NPU190 step parses a ported module only when it holds one of these words: a name found missing
    # without one would be missed.
    names = _names_to_judge()
    missing_somewhere = 0
    for release in npu_api._covered():
        words = npu_api.flaggable_words(release.version)
        for name in names:
            if npu_api.name_status(name, release.version) is False:
                missing_somewhere += 1
                assert words & set(name.split(".")), (release.version, name)
    assert missing_somewhere > 500  # (the check judged many names)
    assert "npu_rms_norm" not in npu_api.flaggable_words("2.14.0")  # (an op is never flagged: no reason to parse)


def test_the_port_reads_a_module_for_the_check_only_when_an_identifier_is_flaggable() -> None:
    from ascend_port.rules.target_api import _holds_any

    words = npu_api.flaggable_words("2.14.0")
    assert {"Stream", "graph"} <= words
    assert not _holds_any("x = upstream + graphs  # paragraph\n", words)  # (substrings, no identifier)
    assert not _holds_any("# a CUDA graph replays the step\n", words)  # (no name's part: after no dot)
    assert _holds_any("s = torch.npu.Stream()\n", words)
    assert _holds_any("s = torch.npu.\uff33tream()\n", words)  # (fullwidth S: Python reads `Stream`)
    assert _holds_any("from torch.npu import (\n    Event,\n    Stream,\n)\n", words)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(["graph", "Stream", "x", "3", "_", "\u00e9", "\u0663", ".", " ", "(", ",", "\n", "import"]),
        max_size=12,
    )
)
def test_an_api_name_part_is_found_as_python_reads_words(parts: list[str]) -> None:
    from ascend_port.rules.target_api import _holds_any

    text = "".join(parts)
    words = frozenset({"graph", "Stream"})

    def placed(match: re.Match[str]) -> bool:  # after a dot, a comma, a bracket or `import` (blanks aside)
        before = text[: match.start()].rstrip(" \t\r\n\\")
        return before.endswith((".", ",", "(")) or re.search(r"(?<!\w)import$", before) is not None

    found = [m for m in re.finditer(r"[^\W\d]\w*", text) if m.group() in words and placed(m)]
    assert _holds_any(text, words) == bool(found)
