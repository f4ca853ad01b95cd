"""Does the fused path add host work? A Llama-style decoder block's training step under `ascend-port emulate`, as
the port writes it with the fused-op rules (the rules with `speeds_up`: RMSNorm, rotary, SwiGLU, attention...) and
without them (`--ignore` of those rules: the same port, plain torch ops on the emulated npu).

    python benchmarks/bench_fused_step.py [--steps 30] [--dtype float32|bfloat16]

The emulator cannot measure NPU speed: its fused ops are CPU references. What it measures is that the fused path
costs no more on the host than the eager ops it replaces (no extra copies, syncs or Python work per step). Prints the
fused ops the ported block calls and ms/step of both ports; exits 1 when the fused port is more than 10 % slower.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# Our own block, written the way transformers' Llama code is (the rules are tuned on that code): device strings and
# `.cuda()` for the device layer, a float32-upcasting RMSNorm, rotate_half rotary, eager attention with an additive
# causal mask, a SwiGLU MLP from one fused projection.
BLOCK = """
import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def attention(query, key, value, scaling):
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    seq = query.shape[-2]
    causal = torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=query.device), diagonal=1)
    attn_weights = attn_weights.masked_fill(causal, float("-inf"))
    attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    return torch.matmul(attn_weights, value)


class MLP(nn.Module):
    def __init__(self, hidden, inter):
        super().__init__()
        self.gate_up_proj = nn.Linear(hidden, 2 * inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)

    def forward(self, x):
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class Block(nn.Module):
    def __init__(self, hidden=256, heads=8, inter=688):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)
        self.norm1, self.norm2 = RMSNorm(hidden), RMSNorm(hidden)
        self.mlp = MLP(hidden, inter)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        out = attention(q, k, v, self.head_dim**-0.5)
        x = x + self.o_proj(out.transpose(1, 2).reshape(b, s, -1))
        return x + self.mlp(self.norm2(x))


def rotary_tables(seq, dim, device):
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, device=device).float() / dim))
    freqs = torch.outer(torch.arange(seq, device=device).float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)[None]
    return emb.cos(), emb.sin()


def build(dtype):
    torch.manual_seed(0)
    model = Block().cuda().to(dtype)
    x = torch.randn(4, 128, 256, device="cuda", dtype=dtype)
    cos, sin = rotary_tables(128, 32, "cuda")
    return model, x, cos.to(dtype), sin.to(dtype)
"""

RUNNER = """
import statistics, sys, time
import torch
sys.path.insert(0, sys.argv[1])
import block
model, x, cos, sin = block.build(getattr(torch, sys.argv[3]))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
def step():
    opt.zero_grad()
    model(x, cos, sin).float().pow(2).mean().backward()
    opt.step()
for _ in range(3):
    step()
times = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    step()
    times.append(time.perf_counter() - start)
print(statistics.median(times))
"""


def port(text: str, fused: bool) -> str:
    from ascend_port.core.selection import Selection
    from ascend_port.port.python import port_source
    from ascend_port.rules.registry import all_rules

    fusions = tuple(r.id for r in all_rules() if r.speeds_up)
    outcome = port_source(text, Selection(ignore=() if fused else fusions))
    assert outcome.new_text is not None, "the port changed nothing"
    return outcome.new_text


def step_time(ported: str, steps: int, dtype: str) -> float:
    cli = "import sys; from ascend_port.cli import main; sys.argv[0] = 'ascend-port'; main()"
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "block.py").write_text(ported, encoding="utf-8")
        Path(tmp, "run.py").write_text(RUNNER, encoding="utf-8")
        command = [sys.executable, "-c", cli, "emulate", "--", sys.executable, str(Path(tmp, "run.py"))]
        out = subprocess.run([*command, tmp, str(steps), dtype], capture_output=True, text=True)
        if out.returncode:
            raise SystemExit(f"the ported block failed under the emulator:\n{out.stdout}{out.stderr}")
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--rounds", type=int, default=3, help="alternate the two ports this many times")
    args = parser.parse_args()
    fused, plain = port(BLOCK, fused=True), port(BLOCK, fused=False)
    ops = sorted(set(re.findall(r"torch_npu\.(npu_\w+)", fused)))
    print(f"fused ops in the ported block: {', '.join(ops) or 'none'}")
    times: dict[str, list[float]] = {"fused": [], "plain": []}
    for _ in range(args.rounds):  # alternated, so that the machine's load weighs on both alike
        times["plain"].append(step_time(plain, args.steps, args.dtype))
        times["fused"].append(step_time(fused, args.steps, args.dtype))
    plain_ms, fused_ms = (statistics.median(times[k]) * 1e3 for k in ("plain", "fused"))
    print(f"{args.dtype}: without the fusions {plain_ms:.2f} ms/step, with them {fused_ms:.2f} ms/step")
    return 1 if fused_ms > 1.10 * plain_ms else 0


if __name__ == "__main__":
    sys.exit(main())
