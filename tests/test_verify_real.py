"""`ascend-port verify --compare` on real projects from PyPI (pinned in pyproject.toml's `test` extra): the
installed package is copied twice into a temporary folder (third-party code is never committed here), one copy
ported with `apply --no-git`; a smoke script, as a user would configure it, trains a tiny model; verify runs it
under the emulator and the original on plain CPU with the same seed, and the losses must agree."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from emulation import CLI, check, environment, installed, needs_compiler, run

pytestmark = pytest.mark.slow

SMOKE = {
    "x_transformers": """
        import torch
        from x_transformers import AutoregressiveWrapper, Decoder, TransformerWrapper

        device = "npu" if hasattr(torch, "npu") and torch.npu.is_available() else "cpu"
        layers = Decoder(dim=32, depth=2, heads=2, rotary_pos_emb=True, attn_flash=True)
        model = AutoregressiveWrapper(TransformerWrapper(num_tokens=64, max_seq_len=32, attn_layers=layers)).to(device)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        data = torch.randint(0, 64, (4, 33))
        for step in range(3):
            loss = model(data.to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "palm_rlhf_pytorch": """
        import torch
        from palm_rlhf_pytorch import PaLM

        device = "npu" if hasattr(torch, "npu") and torch.npu.is_available() else "cpu"
        model = PaLM(num_tokens=64, dim=32, depth=2, heads=2, dim_head=16).to(device)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        seq = torch.randint(0, 64, (2, 24))
        for step in range(3):
            loss = model(seq.to(device), return_loss=True)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
}
PINS = {"x_transformers": ("x-transformers", "2.31.10"), "palm_rlhf_pytorch": ("PaLM-rlhf-pytorch", "0.8.0")}


def project(folder: Path, package: str) -> Path:
    shutil.copytree(installed(*PINS[package], package), folder / package, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "smoke.py").write_text(textwrap.dedent(SMOKE[package]).lstrip(), "utf-8")
    (folder / "pyproject.toml").write_text('[tool.ascend-port.verify]\ncommands = ["python smoke.py"]\n', "utf-8")
    return folder


@pytest.mark.parametrize("package", sorted(SMOKE))
def test_verify_compare_on_a_real_project(tmp_path, package):
    needs_compiler()
    original = project(tmp_path / "original", package)
    ported = project(tmp_path / "ported", package)
    check(run([*CLI, "apply", str(ported / package), "--no-git", "--no-cache", "-q"], cwd=ported))
    assert any("import torch_npu" in f.read_text("utf-8") for f in (ported / package).rglob("*.py"))
    result = run(
        [*CLI, "verify", str(ported), "--compare", "--original", str(original), "--format", "json"],
        cwd=ported,
        env=environment(),
    )
    assert result.returncode == 0, result.stderr + result.stdout
    report = json.loads(result.stdout)
    (smoke,) = report["results"]
    assert smoke["started"] and not smoke["stayed_on_cpu"], smoke
    assert smoke["npu_calls"].get("torch.npu.is_available"), smoke["npu_calls"]
    (entry,) = report["compare"]
    assert len(entry["original"]) == 3 and entry["verdict"].startswith("match"), entry
    assert entry["port"] == pytest.approx(entry["original"], rel=1e-4, abs=1e-5)
