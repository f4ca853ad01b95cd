"""A bounded fuzz run (a few seconds): generated programs and mutated real files through every transform, alone
and together. scripts/fuzz.py runs the same checks for as long as you like. The invariants are in fuzzing.py."""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path

import hypothesmith
import pytest
from fuzzing import GOLDEN, SELECTIONS, InvariantBroken, check, insert_statements, mutate, read_source, wrap_expressions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = settings(deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _small_stdlib_files() -> list[Path]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.glob("*.py") if 2_000 < p.stat().st_size < 12_000)
    return files[::5]


REAL_FILES = sorted(GOLDEN.glob("NPU*/*.in.py")) + _small_stdlib_files()


@settings(FUZZ, max_examples=40)
@given(source=hypothesmith.from_grammar(), selection=st.sampled_from(SELECTIONS), rng=st.randoms(use_true_random=False))
def test_generated_programs_with_cuda_code(source: str, selection, rng: random.Random) -> None:
    check(source, selection)
    check(mutate(source, rng), selection)


@settings(FUZZ, max_examples=6)
@given(source=hypothesmith.from_node(), rng=st.randoms(use_true_random=False))
def test_generated_syntax_trees_with_cuda_code(source: str, rng: random.Random) -> None:
    check(mutate(source, rng), SELECTIONS[0])


@settings(FUZZ, max_examples=25)
@given(path=st.sampled_from(REAL_FILES), selection=st.sampled_from(SELECTIONS), rng=st.randoms(use_true_random=False))
def test_mutated_real_files(path: Path, selection, rng: random.Random) -> None:
    check(mutate(read_source(path), rng), selection)


def test_the_mutators_add_cuda_code_and_keep_the_module_valid() -> None:
    rng = random.Random(7)
    source = "import torch\n\ndef f(a):\n    if a:\n        return g(a)\n    return a\n"
    mutated = insert_statements(source, rng, 5)
    assert mutated.count("\n") == source.count("\n") + 5
    wrapped = wrap_expressions(source, random.Random(3), 3)
    assert ".cuda" in wrapped or "cuda:0" in wrapped or ".to(" in wrapped
    compile(mutated, "m", "exec")
    compile(wrapped, "m", "exec")


def test_the_checker_catches_a_broken_invariant(monkeypatch: pytest.MonkeyPatch) -> None:
    """A port that is not idempotent (one that adds a line each time) must be reported."""
    import fuzzing

    from ascend_port.port.python import PortOutcome

    monkeypatch.setattr(fuzzing, "port_source", lambda text, selection: PortOutcome(text + "x = 1\n"))
    with pytest.raises(InvariantBroken, match="idempotent"):
        fuzzing._check_port_source("y = 2\n", SELECTIONS[0])
    monkeypatch.setattr(fuzzing, "port_source", lambda text, selection: PortOutcome(text + "def (\n"))
    with pytest.raises(InvariantBroken, match="parse"):
        fuzzing._check_port_source("y = 2\n", SELECTIONS[0])
