"""Does the fused path add host work? A Llama-style decoder block's training step under `ascend-port emulate`, as
the port writes it with the fused-op rules (the rules with `speeds_up`: RMSNorm, rotary, SwiGLU, attention...) and
without them (`--ignore` of those rules: the same port, plain torch ops on the emulated npu).

    python benchmarks/bench_fused_step.py [--steps 20] [--dtype float32 bfloat16] [--rounds 3]

The emulator cannot measure NPU speed: its fused ops are CPU references, which compute in float32 (so in bf16 the
fused step's wall time is longer than the eager one's for a reason no NPU has). What it measures is that the fused
path costs no more on the host than the eager ops it replaces (no extra copies, syncs or Python work per step), by
two measures that leave the references out: the operators the step issues (those the model's own code dispatches
to the npu, counted by the emulator's op recording, which pauses while a reference runs, and its backward nodes
here, plus one kernel per fused call and one per backward of one) and the time outside the references. Prints both
with the wall time of both ports, per dtype; exits 1 when the fused port issues more operators per step, or takes
more than 10 % longer outside the references than the plain port's whole step.
"""

from __future__ import annotations

import argparse
import json
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
import json, statistics, sys, threading, time
import torch
import torch_npu
sys.path.insert(0, sys.argv[1])
import block

native = torch._ascend_port_emulate_native  # the emulated device's own op recording (the run hazards)
inside = [0.0]  # seconds spent in the fused ops' references, forward and backward
kernels = [0]  # the fused ops' device kernels: one per call, and one per call that gets a backward
local = threading.local()


def before_node(grad_outputs):
    # (a reference's backward node, on the autograd engine's thread: its ops are that kernel's, not the program's)
    local.paused, local.start = native.pause_op_stats(True), time.perf_counter()


def after_node(grad_inputs, grad_outputs):
    inside[0] += time.perf_counter() - local.start
    native.pause_op_stats(local.paused)


def mark_backward(outputs, arguments):
    # the autograd nodes the reference made: those reached from its outputs before the nodes of its inputs
    stop = {a.grad_fn for a in arguments if torch.is_tensor(a) and a.grad_fn is not None}
    todo = [o.grad_fn for o in outputs if torch.is_tensor(o) and o.grad_fn is not None]
    seen = set()
    while todo:
        node = todo.pop()
        if node is None or node in seen or node in stop or type(node).__name__ == "AccumulateGrad":
            continue
        seen.add(node)
        node.register_prehook(before_node)
        node.register_hook(after_node)
        todo.extend(n for n, _ in node.next_functions)
    kernels[0] += 1 if seen else 0


def timed(op):
    def call(*args, **kwargs):
        start = time.perf_counter()
        out = op(*args, **kwargs)  # (the stand-in pauses the op recording while its reference runs)
        inside[0] += time.perf_counter() - start
        kernels[0] += 1
        mark_backward(out if isinstance(out, (tuple, list)) else [out], [*args, *kwargs.values()])
        return out

    return call


for name in filter(None, sys.argv[4].split(",")):
    setattr(torch_npu, name, timed(getattr(torch_npu, name)))

model, x, cos, sin = block.build(getattr(torch, sys.argv[3]))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


def step():
    opt.zero_grad()
    model(x, cos, sin).float().pow(2).mean().backward()
    opt.step()


for _ in range(3):
    step()
times, outside = [], []
native.reset_op_stats()
inside[0], kernels[0] = 0.0, 0
steps = int(sys.argv[2])
for _ in range(steps):
    was, start = inside[0], time.perf_counter()
    step()
    times.append(time.perf_counter() - start)
    outside.append(times[-1] - (inside[0] - was))
dispatches = sum(record[1] for record in native.op_stats())
print(json.dumps({
    "wall": statistics.median(times),
    "outside": statistics.median(outside),
    "dispatches": dispatches / steps,
    "kernels": kernels[0] / steps,
}))
"""


def port(text: str, fused: bool) -> str:
    from ascend_port.core.selection import Selection
    from ascend_port.port.python import port_source
    from ascend_port.rules.registry import all_rules

    fusions = tuple(r.id for r in all_rules() if r.speeds_up)
    outcome = port_source(text, Selection(ignore=() if fused else fusions))
    assert outcome.new_text is not None, "the port changed nothing"
    return outcome.new_text


def measure(ported: str, steps: int, dtype: str) -> dict[str, float]:
    """One port's step under the emulator, per step: "wall" and "outside" (the wall time less that spent in the
    fused ops' references, forward and backward), in seconds (medians); "dispatches", the operators the program's
    own code dispatches to the npu (the emulator's op recording, which leaves out the references' ops: each stands
    in for one device kernel) and "kernels", the fused ops' kernels (a call, and its backward)."""
    cli = "import sys; from ascend_port.cli import main; sys.argv[0] = 'ascend-port'; main()"
    fused = ",".join(sorted(set(re.findall(r"torch_npu\.(npu_\w+)\(", ported))))
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "block.py").write_text(ported, encoding="utf-8")
        Path(tmp, "run.py").write_text(RUNNER, encoding="utf-8")
        command = [sys.executable, "-c", cli, "emulate", "--", sys.executable, str(Path(tmp, "run.py"))]
        out = subprocess.run([*command, tmp, str(steps), dtype, fused], capture_output=True, text=True)
        if out.returncode:
            raise SystemExit(f"the ported block failed under the emulator:\n{out.stdout}{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(dtype: str, runs: dict[str, list[dict[str, float]]]) -> bool:
    """Print one dtype's measures of both ports; True when the fused port adds host work: more operators (dispatches
    and kernels) per step, or more than 10 % more time outside the references than the plain port's whole step."""
    median = {k: {m: statistics.median(r[m] for r in v) for m in v[0]} for k, v in runs.items()}
    plain, fused = median["plain"], median["fused"]
    ops = {k: v["dispatches"] + v["kernels"] for k, v in median.items()}
    print(
        f"{dtype}: wall time without the fusions {plain['wall'] * 1e3:.2f} ms/step, with them "
        f"{fused['wall'] * 1e3:.2f} ms/step ({fused['outside'] * 1e3:.2f} outside the fused ops' references)"
    )
    print(
        f"{dtype}: host work without the fusions {ops['plain']:.0f} operators/step, with them {ops['fused']:.0f} "
        f"({fused['dispatches']:.0f} dispatched by the model's code + {fused['kernels']:.0f} fused kernels)"
    )
    return ops["fused"] > ops["plain"] or fused["outside"] > 1.10 * plain["wall"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--dtype", nargs="+", default=["float32", "bfloat16"], choices=["float32", "bfloat16"])
    parser.add_argument("--rounds", type=int, default=3, help="alternate the two ports this many times")
    args = parser.parse_args()
    ports = {"plain": port(BLOCK, fused=False), "fused": port(BLOCK, fused=True)}
    ops = sorted(set(re.findall(r"torch_npu\.(npu_\w+)\(", ports["fused"])))
    print(f"fused ops in the ported block: {', '.join(ops) or 'none'}")
    slower = False
    for dtype in args.dtype:
        runs: dict[str, list[dict[str, float]]] = {"plain": [], "fused": []}
        for _ in range(args.rounds):  # alternated, so that the machine's load weighs on both alike
            for name, ported in ports.items():
                runs[name].append(measure(ported, args.steps, dtype))
        slower |= report(dtype, runs)
    return 1 if slower else 0


if __name__ == "__main__":
    sys.exit(main())
