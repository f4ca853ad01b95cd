"""The Triton rewrites (NPU508-NPU513) on flash-linear-attention's kernels (fla-core 0.6.0 from PyPI: unpacked in
.cache/corpora, never installed or imported).

Every file is ported with these rules alone: the number of rewrites per rule is pinned, every ported file parses and
a second port changes nothing. Then kernels that the rules rewrote are lifted out of the original and the ported file
and compiled with Triton-Ascend 3.2.0 (tests/triton_ascend_worker.py --real, in the virtualenv test_triton_ascend.py
makes): the port must compile.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from test_triton_ascend import WORKER, _venv_python

from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for
from ascend_port.run.engine import RunConfig, run

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import corpora

pytestmark = pytest.mark.slow

FLA_CORE = ("fla-core", "0.6.0")
RULES = ("NPU508", "NPU509", "NPU510", "NPU511", "NPU512", "NPU513")
# Measured on fla-core 0.6.0: fla has no tf32 literal in tl.dot and no libdevice attribute chain any more (the
# fused_bitlinear `tl.extra.libdevice.round` of fla bc3b101 is gone).
EXPECTED = {"NPU509": 13, "NPU512": 4, "NPU513": 15}


@pytest.fixture(scope="module")
def ported(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, tuple[Path, list]]:
    """original file -> (ported copy, findings), for the files the rules change: a run over the tree as
    `ascend-port apply --other-devices drop` makes it (fla runs on NPUs too, so `keep` would only report)."""
    try:
        root = corpora.fetch(*FLA_CORE) / "fla"
    except (subprocess.CalledProcessError, OSError) as error:
        pytest.skip(f"cannot download {FLA_CORE[0]} {FLA_CORE[1]}: {error}")
    out = tmp_path_factory.mktemp("fla")
    config = RunConfig(
        selection=Selection(select=RULES), jobs=1, cache=False, options=PortOptions(other_devices="drop")
    )
    changed = {}
    for result in run([root], config).files:
        path = Path(result.path).resolve()
        assert result.error is None, (path, result.error)
        if result.new_bytes is None:
            assert not result.findings, path
            continue
        target = out / path.relative_to(root.resolve())
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(result.new_bytes)
        changed[path] = (target, result.findings)
    return changed


def test_rewrites_on_fla(ported) -> None:
    # (fla's own Ascend kernels, `*/triton_ascend*`, are left out: whether a run treats them as NPU code is the
    # device model's call, not these rules')
    counts = Counter(
        f.rule.id for path, (_, findings) in ported.items() if "triton_ascend" not in str(path) for f in findings
    )
    assert dict(counts) == EXPECTED
    selection = Selection(select=RULES)
    for target, _ in ported.values():
        text = target.read_text()
        ast.parse(text)
        again = handler_for(target).port(text.encode(), selection, PortOptions())
        assert again.new_text is None or again.new_text == text, target


# Kernels the rules rewrote, with a signature and constants that reach the rewritten lines.
KERNELS = (
    {
        "file": "ops/utils/cumsum.py",  # NPU513: `if USE_GRAPH and i_n < 0: return`
        "kernel": "chunk_local_cumsum_scalar_kernel",
        "signature": {"s": "*fp32", "o": "*fp32", "chunk_indices": "*i32", "cu_seqlens": "*i32", "T": "i32"},
        "constants": {
            "scale": None,
            "B": 2,
            "H": 4,
            "BT": 64,
            "REVERSE": False,
            "HAS_SCALE": False,
            "IS_VARLEN": True,
            "USE_GRAPH": True,
        },
        "helpers": [["ops/utils/op.py", "unflatten_program_id"]],
    },
    {
        "file": "ops/delta_rule/fused_recurrent.py",  # NPU509: T.to(tl.int64), T specialised to 1
        "kernel": "fused_recurrent_delta_rule_fwd_kernel",
        "signature": {n: "*fp32" for n in ("q", "k", "v", "u", "beta", "o")} | {"scale": "fp32"},
        "constants": {
            "h0": None,
            "ht": None,
            "cu_seqlens": None,
            "T": 1,
            "B": 1,
            "H": 2,
            "K": 64,
            "V": 64,
            "BK": 64,
            "BV": 64,
            "USE_INITIAL_STATE": False,
            "STORE_FINAL_STATE": False,
            "IS_BETA_HEADWISE": True,
            "IS_VARLEN": False,
        },
        "helpers": [],
        "original_fails": True,
    },
)


@pytest.mark.triton_ascend
def test_ported_fla_kernels_compile_on_triton_ascend(ported, tmp_path: Path) -> None:
    root = corpora.fetch(*FLA_CORE) / "fla"
    specs = []
    for kernel in KERNELS:
        original = (root / kernel["file"]).resolve()
        assert original in ported, f"{kernel['file']}: not rewritten any more"
        helpers = [[str(root / file), name] for file, name in kernel["helpers"]]
        specs.append({**kernel, "original": str(original), "ported": str(ported[original][0]), "helpers": helpers})
    spec_file = tmp_path / "kernels.json"
    spec_file.write_text(json.dumps(specs))
    done = subprocess.run([str(_venv_python()), str(WORKER), "--real", str(spec_file)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = {(r["kernel"], r["side"]): r["error"] for r in json.loads(done.stdout.splitlines()[-1])}
    for kernel in KERNELS:
        assert outcome[(kernel["kernel"], "ported")] is None, outcome[(kernel["kernel"], "ported")]
        if kernel.get("original_fails"):
            assert outcome[(kernel["kernel"], "original")] is not None
