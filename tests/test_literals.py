"""The trigger prefilter (codemods/literals.py) may only make the search faster: on any text, the patterns it picks
find exactly what the full trigger patterns find."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_port.codemods.literals import TriggerFilter, required_strings
from ascend_port.codemods.python import active_transformers, trigger_filter, trigger_patterns
from ascend_port.rules import Selection


@pytest.mark.parametrize("fragment, expected", [
    (r"\bgraph\b", {"graph"}),
    ("[Cc][Uu][Dd][Aa]", {"cuda"}),
    ("nccl|NCCL", {"nccl"}),
    (r"(?:float64|\.double\(|torch\.double\b)", {"float64", ".double(", "torch.double"}),
    (r"def \w*(?:[Rr]otary|rope)\w*[\s\S]{0,40}?float64", {"float64"}),
    (r"\.cuh?[\"']", {".cu"}),
    (r"(?<!\w)jit\b", {"jit"}),
    (r"(?:abcd)+ef", {"abcd"}),  # a group repeated at least once is required too
])
def test_required_strings(fragment: str, expected: set[str]) -> None:
    assert required_strings(fragment) == expected


@pytest.mark.parametrize("fragment", [r"\w+", "a|bcdef", "(?:xyz)?", "[a-z]{5}", r"(a)\1", "ab", "(?:abc)*"])
def test_fragments_without_a_required_string_are_always_run(fragment: str) -> None:
    assert required_strings(fragment) is None
    assert TriggerFilter([("statement", [fragment])]).patterns("")  # kept even for an empty text


def test_no_pattern_when_no_literal_occurs() -> None:
    assert TriggerFilter([("statement", [r"\bgraph\b", "cuda"])]).patterns("x = 1\n") == ()


def _matches(patterns, text: str) -> dict[str, list[tuple[int, int]]]:
    return {scope: [m.span() for m in pattern.finditer(text)] for pattern, scope in patterns}


WORDS = ["cuda", "CUDA", "Cuda", ".cuda()", "nccl", "graph", "graphs", "_graph", "compile", "jit", "@triton.jit",
         "float64", ".double(", "rotary", "def apply_rotary(x):", "class RotaryEmbedding:", "inv_freq", "silu(",
         "torch.sqrt(", "FusedLayerNorm", "autocast", "flash_attn", "\n", " ", "(", ")", "x", "=", "'", '"',
         "device_id", ".cu'", ".cuh\"", "try:\n    from triton.language.extra.cann import libdevice\n", "İ", "K"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=40).map("".join))
def test_the_filtered_patterns_find_exactly_what_the_full_ones_find(text: str) -> None:
    classes = active_transformers(Selection())
    full = _matches(trigger_patterns(classes), text)
    filtered = _matches(trigger_filter(classes).patterns(text), text)
    assert {scope: spans for scope, spans in full.items() if spans} == \
        {scope: spans for scope, spans in filtered.items() if spans}
