"""The trigger search (codemods/literals.py) may only make the search faster: on any text, it finds exactly what
each trigger fragment run over the whole text finds."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_port.core.selection import Selection
from ascend_port.port.python import active_transformers, trigger_filter, trigger_patterns
from ascend_port.python.literals import TriggerFilter, line_local, required_strings
from ascend_port.python.scopes import Trigger


@pytest.mark.parametrize(
    "fragment, expected",
    [
        (r"\bgraph\b", {"graph"}),
        ("[Cc][Uu][Dd][Aa]", {"cuda"}),
        ("nccl|NCCL", {"nccl"}),
        (r"(?:float64|\.double\(|torch\.double\b)", {"float64", ".double(", "torch.double"}),
        (r"def \w*(?:[Rr]otary|rope)\w*[\s\S]{0,40}?float64", {"float64"}),
        (r"\.cuh?[\"']", {".cu"}),
        (r"(?<!\w)jit\b", {"jit"}),
        (r"(?:abcd)+ef", {"abcd"}),  # a group repeated at least once is required too
    ],
)
def test_required_strings(fragment: str, expected: set[str]) -> None:
    assert required_strings(fragment) == expected


@pytest.mark.parametrize("fragment", [r"\w+", "a|bcdef", "(?:xyz)?", "[a-z]{5}", r"(a)\1", "ab", "(?:abc)*"])
def test_fragments_without_a_required_string_are_always_run(fragment: str) -> None:
    assert required_strings(fragment) is None
    assert TriggerFilter([Trigger(fragment, "statement")]).matches("abcdef xyz xyz") == [
        (m.start(), "statement", None) for m in re.finditer(fragment, "abcdef xyz xyz")
    ]


def test_no_match_when_no_literal_occurs() -> None:
    assert TriggerFilter([Trigger(r"\bgraph\b"), Trigger("cuda")]).matches("x = 1\n") == []


def test_matches_on_comment_lines_do_not_count() -> None:
    text = "# cuda\nx = 1  # cuda\n  # cuda\ry = 2\n"
    assert [offset for offset, *_ in TriggerFilter([Trigger("cuda")]).matches(text)] == [text.index("cuda", 10)]


def test_a_trigger_counts_only_with_what_it_also_needs() -> None:
    search = TriggerFilter([Trigger("rsqrt", "class", also=("mean", "parameter"))])
    assert search.matches("y = x.rsqrt()\n") == []
    assert search.matches("y = x.mean().rsqrt()\nw = nn.Parameter(w)\n") == [(13, "class", None)]


@pytest.mark.parametrize(
    "fragment, expected",
    [
        (r"\bgraph\b", True),
        ("[Cc][Uu][Dd][Aa]", True),
        (r"(?<!self\.)\blayer_norm\(", True),
        (r"[^\n]*x", True),
        (r"a\s*b", False),
        (r"[\s\S]{0,9}x", False),
        (r"a[^b]", False),
        (r"a$", False),
        (r"^a", False),
        (r"(?s)a.b", False),
        (r"a.b", True),
        (r"x(?=[^\n]*\n[^\n]*y)", False),
        (r"(a)\1", False),
    ],
)
def test_line_local(fragment: str, expected: bool) -> None:
    assert line_local(fragment) is expected


def _reference(classes, text: str) -> set[tuple[int, object, object]]:
    """Every fragment on its own over the whole text, but not on comment lines nor without what it also needs."""

    def comment(offset: int) -> bool:
        return re.split(r"\r\n|\r|\n", text[:offset])[-1].lstrip().startswith("#")

    return {
        (m.start(), trigger.scope, cls)
        for cls in classes
        for trigger in cls.triggers()
        if all(s in text.lower() for s in trigger.also)
        if not trigger.imports or _imports_one_of(text, trigger.imports)
        if trigger.when is None or trigger.when(text)
        for m in re.finditer(trigger.pattern, text)
        if not comment(m.start())
    }


def _imports_one_of(text: str, packages: tuple[str, ...]) -> bool:
    """Trigger.imports as its comment says it: a logical line, cut at its `#`, with `import` and a package's word."""
    joined = text.replace("\\\r\n", "   ").replace("\\\n", "  ")
    return any(
        re.search(r"\bimport\b", line) and re.search(r"\b(?:" + "|".join(packages) + ")", line)
        for line in (whole.split("#", 1)[0] for whole in joined.split("\n"))
    )


WORDS = [
    "cuda",
    "CUDA",
    "torch.xpu",  # (another device: the multi-device rule's trigger counts)
    "F.silu(a) * b",
    "dtype=torch.float64",
    ".to(torch.float64)",
    "Cuda",
    ".cuda()",
    "nccl",
    "graph",
    "graphs",
    "_graph",
    "compile",
    "jit",
    "@triton.jit",
    "float64",
    ".double(",
    "rotary",
    "def apply_rotary(x):",
    "class RotaryEmbedding:",
    "inv_freq",
    "silu(",
    "torch.sqrt(",
    "FusedLayerNorm",
    "autocast",
    "flash_attn",
    "\n",
    " ",
    "(",
    ")",
    "x",
    "=",
    "'",
    '"',
    "device_id",
    ".cu'",
    '.cuh"',
    "try:\n    from triton.language.extra.cann import libdevice\n",
    "İ",
    "K",
    "self.",
    "layer_norm(",
    ".float()",
    "float32)",
    ").type_as(",
    "\r",
    "rotate_half(q) ",
    "* ",
    "rsqrt",
    "# ",
    "mean(",
    "Parameter",
    "import xformers.ops as xops\n",
    "from flash_attn import flash_attn_func\n",
    "enable_xformers_memory_efficient_attention()",
    "is_flash_attn_2_available()",
    "xops.memory_efficient_attention(q, k, v)",
    "\\\n",
    "# import xformers\n",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=40).map("".join))
def test_the_search_finds_exactly_what_each_fragment_finds(text: str) -> None:
    classes = active_transformers(Selection())
    found = trigger_filter(classes).matches(text)
    assert set(found) == _reference(classes, text)
    assert [offset for offset, *_ in found] == sorted(offset for offset, *_ in found)
    # and at least every match of the combined patterns (one alternation's matches never overlap) that counts
    combined = {(m.start(), scope) for pattern, scope in trigger_patterns(classes) for m in pattern.finditer(text)}
    assert combined & {(offset, scope) for offset, scope, _ in _reference(classes, text)} <= {m[:2] for m in found}


def test_a_string_that_starts_inside_another_is_found() -> None:
    # One scan finds the strings that contain no other; a match hides what starts inside it (``torch.double``
    # hides ``.double(`` in ``torch.double(``, ``float64`` hides ``64bit``), which is then looked for there.
    search = TriggerFilter([Trigger(r"torch\.double\b", "a"), Trigger(r"\.double\(", "b"), Trigger("64bit", "c")])
    text = "y = torch.double(x)\nz = float64bit\n"
    assert [scope for _, scope, _ in search.matches(text)] == ["a", "b", "c"]
    search = TriggerFilter([Trigger("float64", "a"), Trigger("64bit", "c")])
    assert [scope for _, scope, _ in search.matches(text)] == ["a", "c"]
    assert [scope for _, scope, _ in search.matches("z = 64bit + float64\n")] == ["c", "a"]


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("pipe.enable_xformers_memory_efficient_attention()\n", False),  # (names xformers, imports nothing of it)
        ("from diffusers.utils import is_xformers_available\nif is_xformers_available(): pass\n", False),
        ("import xformers\n", True),
        ("import os, xformers.ops as xops\n", True),
        ("import torch; import xformers\n", True),
        ("if ok:\n    from xformers.ops import (\n        memory_efficient_attention,\n    )\n", True),
        ("from \\\n    xformers import ops\n", True),
    ],
)
def test_a_trigger_for_a_library_counts_only_in_a_module_that_imports_it(text: str, counts: bool) -> None:
    search = TriggerFilter([Trigger(r"xformers|memory_efficient_attention", "s", imports=("xformers",))])
    assert bool(search.matches(text)) == counts
