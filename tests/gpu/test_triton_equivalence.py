"""The Triton rewrites (NPU508-NPU513) on a CUDA GPU: each golden kernel pair computes the same thing.

For every pair of tests/gpu/kernel_pairs.py, the original (golden/<rule>/<case>.in.py) and the port (.out.py) are
launched with the same inputs, which include NaN, +-inf, -0.0 and a denormal, into outputs filled with NaN first (a
lane a kernel does not write shows). The outputs must be bitwise equal (NaN where NaN), or within a tolerance for
the medium rules that say so; and the TTIR, with locations and symbol names stripped, must be identical. Skipped
without torch, Triton or a CUDA device. Run: ``python -m pytest tests/gpu -q`` (tests/gpu/run.sh).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from kernel_pairs import PAIRS, Pair, Run, values

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

pytestmark = pytest.mark.gpu
SPECIALS = (float("nan"), float("inf"), float("-inf"), -0.0, 1e-40)


def load(path: Path, kernel: str):
    spec = importlib.util.spec_from_file_location(f"golden_{path.parent.name}_{path.name.replace('.', '_')}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, kernel)


def arguments(pair: Pair, run: Run, seed: int) -> dict[str, object]:
    generator = torch.Generator(device="cpu").manual_seed(seed)
    args: dict[str, object] = {}
    for name, (kind, value) in values(pair, run).items():
        if kind == "meta":
            continue  # (the autotune config sets it)
        if value is None or kind in ("int", "constexpr"):
            args[name] = value
        elif kind == "in":
            x = torch.randn(value, generator=generator).flatten()
            x[: len(SPECIALS)] = torch.tensor(SPECIALS)
            args[name] = x.reshape(value).cuda()
        else:
            args[name] = torch.full(value, float("nan"), device="cuda")
    return args


def launch(fn, args: dict[str, object]):
    compiled = fn[(1,)](**args)
    torch.cuda.synchronize()
    return compiled


def fresh(args: dict[str, object]) -> dict[str, object]:
    return {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in args.items()}


def outputs(pair: Pair, args: dict[str, object]) -> dict[str, object]:
    return {name: args[name] for name, kind, _ in pair.params if kind == "out"}


def bitwise_equal(a, b) -> bool:
    same = (a.view(torch.int32) == b.view(torch.int32)) | (torch.isnan(a) & torch.isnan(b))
    return bool(same.all())


def stripped_ttir(compiled) -> str:
    """TTIR without `#loc` lines, `loc(...)` references and symbol names: what the kernel computes."""
    text = compiled.asm["ttir"]
    text = "\n".join(line for line in text.splitlines() if not line.startswith("#loc"))
    out, depth, i = [], 0, 0
    while i < len(text):
        if depth == 0 and text.startswith(" loc(", i):
            depth, i = 1, i + len(" loc(")
            continue
        if depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
        else:
            out.append(text[i])
        i += 1
    return re.sub(r"@[\w$.]+", "@f", "".join(out))


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{p.rule}-{p.kernel}" for p in PAIRS])
def test_same_results(pair: Pair) -> None:
    original, ported = load(pair.original, pair.kernel), load(pair.ported, pair.kernel)
    for index, run in enumerate(pair.runs):
        args = arguments(pair, run, seed=index)
        a, b = fresh(args), fresh(args)
        launch(original, a)
        launch(ported, b)
        for name, got in outputs(pair, b).items():
            want = outputs(pair, a)[name]
            assert not torch.isnan(got).all(), f"{pair.case} {run}: {name} never written"
            if pair.tolerance:
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4, equal_nan=True)
            else:
                assert bitwise_equal(got, want), f"{pair.case} {run}: {name} differs"


@pytest.mark.parametrize("pair", [p for p in PAIRS if p.ttir_run is not None], ids=lambda p: f"{p.rule}-{p.kernel}")
def test_same_ttir(pair: Pair) -> None:
    assert pair.ttir_run is not None
    args = arguments(pair, pair.ttir_run, seed=0)
    original = launch(load(pair.original, pair.kernel), fresh(args))
    ported = launch(load(pair.ported, pair.kernel), fresh(args))
    assert stripped_ttir(ported) == stripped_ttir(original)


@pytest.mark.parametrize("pair", [p for p in PAIRS if p.gpu_original_fails], ids=lambda p: f"{p.rule}-{p.kernel}")
def test_port_fixes_gpu_failure(pair: Pair) -> None:
    for run in pair.gpu_original_fails:
        args = arguments(pair, run, seed=0)
        with pytest.raises(Exception):  # noqa: B017 (Triton raises CompilationError, whose module moved)
            launch(load(pair.original, pair.kernel), fresh(args))
        launch(load(pair.ported, pair.kernel), fresh(args))
