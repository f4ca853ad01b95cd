"""ascend-port emulate: torch_npu.optim's fused optimizers (ascend_port/emulate/optimizers.py), torch_npu.profiler
and torch_npu.npu.mstx, run in scripts under the emulated npu device."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from test_emulate import built_device, check, emulate  # noqa: F401 (built_device: the module fixture)

from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for

# Two copies of one model on the npu, each trained by its own optimizer on the same batches; `steps` yields the
# largest parameter difference after each step.
TWIN_MODELS = """
import copy, torch, torch_npu
O = torch_npu.optim

def steps(make, make_reference, n=4):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).npu()
    reference = copy.deepcopy(model)
    opt, ref = make(model.parameters()), make_reference(reference.parameters())
    for _ in range(n):
        x = torch.randn(5, 6, device="npu")
        for m, o in ((model, opt), (reference, ref)):
            o.zero_grad()
            m(x).pow(2).mean().backward()
            o.step()
        yield max((a - b).abs().max().item() for a, b in zip(model.parameters(), reference.parameters()))

def same(make, make_reference, tol=1e-6):
    return all(d <= tol for d in steps(make, make_reference))
"""


def test_npu_fused_adamw_matches_torch_adamw_step_by_step(tmp_path):
    out = emulate(
        tmp_path,
        TWIN_MODELS
        + """
kw = dict(lr=1e-2, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.05)
print(same(lambda p: O.NpuFusedAdamW(p, **kw), lambda p: torch.optim.AdamW(p, **kw)))
print(same(lambda p: O.NpuFusedAdamW(p, amsgrad=True, **kw), lambda p: torch.optim.AdamW(p, amsgrad=True, **kw)))
# NpuFusedAdam's weight decay is L2 (added to the gradient), as torch.optim.Adam's.
print(same(lambda p: O.NpuFusedAdam(p, **kw), lambda p: torch.optim.Adam(p, **kw)))
# Defaults: NpuFusedAdamW decays by 0.01 (torch.optim.AdamW's default too), not by apex FusedAdam's 0.
print(O.NpuFusedAdamW([torch.zeros(1, device="npu")]).defaults["weight_decay"])
print(same(lambda p: O.NpuFusedAdamW(p), lambda p: torch.optim.AdamW(p, weight_decay=0.01)))
print(same(lambda p: O.NpuFusedAdamW(p), lambda p: torch.optim.AdamW(p, weight_decay=0.0)))
print(O.NpuFusedAdam([torch.zeros(1, device="npu")]).defaults["weight_decay"])
""",
    )
    assert check(out).split() == ["True", "True", "True", "0.01", "True", "False", "0"]


def test_npu_fused_sgd_matches_sgd_with_momentum(tmp_path):
    out = emulate(
        tmp_path,
        TWIN_MODELS
        + """
kw = dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=1e-2)
print(same(lambda p: O.NpuFusedSGD(p, **kw), lambda p: torch.optim.SGD(p, **kw)))
nesterov = dict(lr=0.1, momentum=0.9, nesterov=True)
print(same(lambda p: O.NpuFusedSGD(p, **nesterov), lambda p: torch.optim.SGD(p, **nesterov)))
print(same(lambda p: O.NpuFusedSGD(p, **kw), lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.5)))
print(same(lambda p: O.NpuFusedAdadelta(p, weight_decay=0.1), lambda p: torch.optim.Adadelta(p, weight_decay=0.1)))
rms = dict(momentum=0.5, centered=True, weight_decay=0.1)
print(same(lambda p: O.NpuFusedRMSprop(p, **rms), lambda p: torch.optim.RMSprop(p, **rms)))
try:
    O.NpuFusedSGD([torch.zeros(1, device="npu")])  # torch_npu's lr is required (torch.optim.SGD's is 1e-3)
except ValueError as error:
    print("lr required")
""",
    )
    assert check(out).splitlines() == ["True", "True", "False", "True", "True", "lr required"]


def test_other_fused_optimizers_first_step(tmp_path):
    """One element, one step of each optimizer torch.optim lacks, against its formula written out by hand."""
    out = emulate(
        tmp_path,
        """
import math, torch, torch_npu
O = torch_npu.optim

def first_step(name, p0=2.0, g=0.5, **kw):
    p = torch.tensor([p0], device="npu", requires_grad=True)
    opt = getattr(O, name)([p], **kw)
    p.grad = torch.tensor([g], device="npu")
    opt.step()
    return p.item(), p.grad.item()

def near(got, want, tol=1e-5):
    return abs(got - want) < tol

# LAMB: m = 0.1 g, v = 0.001 g^2, no bias correction; trust ratio min(|p|, 10) / |adam step| (1 with adam=True).
adam_step = 0.1 * 0.5 / (math.sqrt(0.001 * 0.25) + 1e-6)
print(near(first_step("NpuFusedLamb", lr=0.1)[0], 2.0 - 0.1 * 2.0))
print(near(first_step("NpuFusedLamb", lr=0.1, adam=True)[0], 2.0 - 0.1 * adam_step))
# TensorFlow RMSprop: the squared average starts at 1 (1 - alpha = 0.1), epsilon inside the root.
print(near(first_step("NpuFusedRMSpropTF", lr=0.01)[0], 2.0 - 0.01 * 0.5 / math.sqrt(1 + 0.1 * (0.25 - 1) + 1e-10)))
# BERT Adam: no bias correction, decay 0.01 added to the update; the gradient is clipped in place to norm 1 first.
print(near(first_step("NpuFusedBertAdam", lr=0.1)[0], 2.0 - 0.1 * (adam_step + 0.01 * 2.0)))
print(near(first_step("NpuFusedBertAdam", g=3.0, lr=0.1)[1], 1.0))
# AdamP on a vector (no projection): decoupled decay, then Adam's step: lr / (1 - 0.9) * m / (sqrt(v / 0.001) + eps).
print(near(first_step("NpuFusedAdamP", lr=0.1, weight_decay=0.5)[0], 2.0 * (1 - 0.05) - 1.0 * 0.05 / (0.5 + 1e-8)))
""",
    )
    assert check(out).split() == ["True"] * 6


CONTRACT = """
import torch, torch_npu
O = torch_npu.optim

def attempt(make_model, loop=1, zero=lambda model, opt: opt.zero_grad(), make=O.NpuFusedAdamW):
    model = make_model()
    opt, p = make(model.parameters()), next(model.parameters())
    try:
        for _ in range(loop):
            zero(model, opt)
            model(torch.ones(1, 2, device=p.device, dtype=p.dtype)).sum().backward()
            opt.step()
    except (ValueError, TypeError) as error:
        print(type(error).__name__, isinstance(error, ValueError), isinstance(error, TypeError), "|", error)
    else:
        print("accepted")
"""


def test_fused_optimizer_rejects_a_cpu_parameter(tmp_path):
    out = emulate(
        tmp_path, CONTRACT + "attempt(lambda: torch.nn.Linear(2, 2))\nattempt(lambda: torch.nn.Linear(2, 2).npu())"
    )
    assert check(out).splitlines() == [
        "OpContractError True False | NpuFusedAdamW: parameter 0 of param group 0 is on cpu: the fused optimizers "
        "combine the parameters into flat NPU buffers, so every parameter must be on the npu device (build the "
        "optimizer after model.npu())",
        "accepted",
    ]


def test_fused_optimizer_contract(tmp_path):
    report = tmp_path / "report.json"
    out = emulate(
        tmp_path,
        CONTRACT
        + """
attempt(lambda: torch.nn.Linear(2, 2).npu().bfloat16())
attempt(lambda: torch.nn.Linear(2, 2).npu().half(), loop=3, make=lambda p: O.NpuFusedSGD(p, lr=0.1, momentum=0.9))
attempt(lambda: torch.nn.Linear(2, 2).npu(), zero=lambda model, opt: opt.zero_grad(set_to_none=True))
attempt(lambda: torch.nn.Linear(2, 2).npu(), loop=2, zero=lambda model, opt: model.zero_grad())
""",
        "--report",
        str(report),
    )
    assert check(out).splitlines() == [
        "OpTypeError False True | NpuFusedAdamW: parameter 0 of param group 0 is torch.bfloat16: parameters must be "
        "float32 or float16",
        "accepted",
        "OpContractError True False | NpuFusedAdamW: set_to_none is not supported in fused optimizers",
        "OpContractError True False | NpuFusedAdamW: parameter 0 of param group 0 has a new gradient tensor since "
        "the first step (p.grad set to None or assigned, backward with create_graph=True): the update would read "
        "the stale flat gradient buffer; clear gradients with optimizer.zero_grad(), which zeroes them in place",
    ]
    data = json.loads(report.read_text())
    assert data["calls"]["torch_npu.optim.NpuFusedSGD.step"] == 3
    violations = data["contract_violations"]
    assert len(violations) == 3 and all(v.startswith("torch_npu.optim.NpuFusedAdamW: ") for v in violations)


# What a CUDA training script does with torch.profiler and NVTX: the Before examples of NPU704 and NPU700
# (ascend_port/rules/compile.py), a scheduled profile with a trace handler, and the other NVTX calls.
CUDA_SCRIPT = """
import torch
from torch.cuda import nvtx

model = torch.nn.Linear(4, 4).cuda()
x = batch = torch.randn(2, 4).cuda()
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
    model(x)
ready = []
with torch.profiler.profile(
    activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
    schedule=torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=2),
    on_trace_ready=lambda p: ready.append(p.step_num),
) as prof:
    for step in range(10):
        torch.cuda.nvtx.range_push("forward")
        with torch.cuda.nvtx.range("step {}", step):
            loss = model(batch)
        torch.cuda.nvtx.range_pop()
        nvtx.mark("optimizer")
        prof.step()
handler = torch.profiler.tensorboard_trace_handler("./traces", worker_name="worker0")
with torch.profiler.profile(schedule=torch.profiler.schedule(wait=0, warmup=0, active=1, repeat=1),
                            on_trace_ready=handler) as prof:
    for step in range(3):
        prof.step()
range_id = torch.cuda.nvtx.range_start("eval")
torch.cuda.nvtx.range_end(range_id)
print(ready, range_id > 0)
"""


def test_profiler_and_mstx_calls_of_a_ported_script(tmp_path):
    ported = handler_for(Path("train.py")).port(CUDA_SCRIPT.encode(), Selection(), PortOptions()).new_text
    assert ported is not None and "import torch_npu" in ported
    for call in ("torch_npu.profiler.profile(", "ProfilerActivity.NPU", "torch_npu.profiler.schedule(",
                 "torch_npu.profiler.tensorboard_trace_handler(", "torch_npu.npu.mstx.annotate(",
                 "torch_npu.npu.mstx.range_start(", "import mstx as nvtx"):  # fmt: skip
        assert call in ported, ported
    report = tmp_path / "report.json"
    out = emulate(tmp_path, ported, "--report", str(report))
    assert check(out).strip() == "[4, 8] True"
    assert [p.name.split("_")[0] for p in (tmp_path / "traces").iterdir()] == ["worker0"]
    assert (next((tmp_path / "traces").iterdir()).name).endswith("_ascend_pt")
    data = json.loads(report.read_text())
    calls = {name: count for name, count in data["calls"].items() if "profiler" in name or "mstx" in name}
    assert calls == {
        "torch_npu.npu.mstx.annotate": 10,
        "torch_npu.npu.mstx.mark": 10,
        "torch_npu.npu.mstx.range_end": 1,
        "torch_npu.npu.mstx.range_pop": 10,
        "torch_npu.npu.mstx.range_push": 10,
        "torch_npu.npu.mstx.range_start": 1,
        "torch_npu.profiler.profile": 3,
        "torch_npu.profiler.profile.step": 13,
        "torch_npu.profiler.schedule": 2,
        "torch_npu.profiler.tensorboard_trace_handler": 1,
    }
    assert data["not_implemented"] == {} and data["exit_code"] == 0


def test_profiler_keeps_torch_npu_contract(tmp_path):
    report = tmp_path / "report.json"
    out = emulate(
        tmp_path,
        """
import warnings, torch, torch_npu
warnings.simplefilter("error")
prof = torch_npu.profiler.profile()
for call in (lambda: prof.key_averages(), lambda: torch_npu.profiler.no_such_name):
    try:
        call()
    except AttributeError:
        print("AttributeError")
try:
    prof.export_stacks("stacks.txt")
except NotImplementedError as error:
    print(error)
try:
    torch_npu.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
except UserWarning as warning:
    print(warning)
prof.export_chrome_trace("trace.json")
print(open("trace.json").read().startswith('{"traceEvents": []'))
print(torch_npu.profiler.ProfilerActivity.NPU in torch_npu.profiler.supported_activities())
""",
        "--report",
        str(report),
    )
    assert check(out).splitlines() == [
        "AttributeError",
        "AttributeError",
        "torch_npu.profiler.profile.export_stacks is not emulated by ascend-port emulate",
        "torch_npu.profiler: Invalid activities, only CPU and NPU are supported, reset it to default.",
        "True",
        "True",
    ]
    assert json.loads(report.read_text())["not_implemented"] == {"torch_npu.profiler.profile.export_stacks": 1}


def test_mstx_is_the_class_and_its_ranges_nest(tmp_path):
    out = emulate(
        tmp_path,
        """
import sys, warnings, torch, torch_npu
from torch_npu.npu import mstx
from torch_npu.npu.mstx import annotate
assert torch.npu.mstx is mstx and isinstance(mstx, type) and mstx.annotate is annotate
assert type(sys.modules["torch_npu.npu.mstx"]).__name__ == "module"
print(mstx.range_push("a"), mstx.range_push("b", domain="d"), mstx.range_push("c"), mstx.range_pop(),
      mstx.range_pop(), mstx.range_pop(), mstx.range_pop("d"), mstx.range_pop("d"))
first, second = mstx.range_start("x"), mstx.range_start("y", torch.npu.current_stream())
mstx.range_end(second); mstx.range_end(first)
print(first > 0 and second > first)

@annotate()
def f(): return 3

@mstx.mstx_range("g")
def g(): return 4

print(f(), g())
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(mstx.range_push(""), mstx.range_start("x", stream="not a stream"), mstx.range_pop(domain=""))
print(len(caught))
""",
    )
    assert check(out).splitlines() == ["0 0 1 1 0 -1 0 -1", "True", "3 4", "-1 0 -1", "3"]


# NPU706/NPU708 (tests/test_compile_optim.py): a training script that compiles its model with reduce-overhead and
# steps a fused Adam, ported for a torch-npu release without `_fused_adam_`.
COMPILED_TRAINING = """\
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).cuda()
fast = torch.compile(model, mode="reduce-overhead")
opt = torch.optim.Adam(model.parameters(), lr=5e-2, fused=True)
x, y = torch.randn(16, 6).cuda(), torch.randn(16, 1).cuda()
losses = []
for _ in range(20):
    opt.zero_grad()
    loss = (fast(x) - y).pow(2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
print(opt.param_groups[0]["fused"], losses[-1] < losses[0] / 2, next(model.parameters()).device.type)
"""


def test_ported_compiled_training_runs_on_the_npu(tmp_path):
    """The NPU takes the default mode and torch's own choice of Adam kernels (no _fused_adam_ in 2.8.0)."""
    ported = handler_for(Path("train.py")).port(
        COMPILED_TRAINING.encode(), Selection(), PortOptions(target="2.8.0.post5")
    )
    assert ported.new_text is not None and 'mode="default" if hasattr(torch, "npu")' in ported.new_text
    out = emulate(tmp_path, ported.new_text, "--torch-npu", "2.8.0.post5")
    assert check(out).split()[-3:] == ["None", "True", "npu"]


# NPU709 (tests/test_optimizer_fused_on_npu.py): a CUDA training script whose AdamW the port makes fused on the NPU.
# The reference optimizer passes foreach=False, which the rule leaves: it stays torch's per-parameter loop.
FUSED_ON_NPU = """\
import copy, io
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).cuda()
reference = copy.deepcopy(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.05)
ref = torch.optim.AdamW(reference.parameters(), lr=1e-2, weight_decay=0.05, foreach=False)
for _ in range(5):
    x = torch.randn(5, 6).cuda()
    for m, o in ((model, opt), (reference, ref)):
        o.zero_grad()
        m(x).pow(2).mean().backward()
        o.step()
difference = max((a - b).abs().max().item() for a, b in zip(model.parameters(), reference.parameters()))
# a checkpoint of the fused optimizer continues in an unfused one as in the fused one
saved = io.BytesIO()
torch.save(opt.state_dict(), saved)
saved.seek(0)
other = copy.deepcopy(model)
plain = torch.optim.AdamW(other.parameters(), lr=1e-2, weight_decay=0.05, foreach=False)
plain.load_state_dict(torch.load(saved))
for group in plain.param_groups:
    group["fused"] = None
x = torch.randn(5, 6).cuda()
for m, o in ((model, opt), (other, plain)):
    o.zero_grad()
    m(x).pow(2).mean().backward()
    o.step()
resumed = max((a - b).abs().max().item() for a, b in zip(model.parameters(), other.parameters()))
print(opt.param_groups[0]["fused"], difference < 1e-6, resumed < 1e-6, next(model.parameters()).device.type)
"""


def test_ported_fused_adamw_trains_as_the_unfused_one(tmp_path):
    ported = handler_for(Path("train.py")).port(FUSED_ON_NPU.encode(), Selection(), PortOptions()).new_text
    assert ported is not None and ported.count('fused=True if hasattr(torch, "npu")') == 1
    assert "foreach=False)\n" in ported  # (the reference and the resumed optimizer: left unfused)
    assert check(emulate(tmp_path, ported)).split() == ["True", "True", "True", "npu"]


def test_fused_optimizers_on_the_npu_in_low_precision(tmp_path):
    """_fused_adamw_, _fused_adam_ and _fused_sgd_ on npu parameters of every dtype match the per-parameter loop
    to rounding (bfloat16: the fused kernels round once, the loop after each op), SGD too where torch's CPU kernel
    alone would leave bfloat16 SIMD blocks un-updated (pytorch/pytorch#191763; emulate/device.py)."""
    out = emulate(
        tmp_path,
        """
import torch, torch_npu
makers = {
    "AdamW": lambda p, **k: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.05, **k),
    "Adam": lambda p, **k: torch.optim.Adam(p, lr=1e-2, **k),
    "SGD": lambda p, **k: torch.optim.SGD(p, lr=1e-1, momentum=0.9, nesterov=True, weight_decay=1e-2, **k),
}
for name, make in makers.items():
    for dtype, tolerance in ((torch.float32, 1e-6), (torch.bfloat16, 2**-6)):
        torch.manual_seed(0)
        p = torch.randn(100, device="npu", dtype=dtype, requires_grad=True)
        q = p.detach().clone().requires_grad_()
        fused, plain = make([p], fused=True), make([q], foreach=False)
        for _ in range(3):
            g = torch.randn(100, device="npu", dtype=dtype)
            p.grad, q.grad = g.clone(), g.clone()
            fused.step()
            plain.step()
        print(name, torch.allclose(p.float(), q.float(), rtol=tolerance, atol=tolerance), p.dtype == dtype)
""",
    )
    assert check(out).split() == ["AdamW", "True", "True", "AdamW", "True", "True"] + [
        word for name in ("Adam", "SGD") for word in (name, "True", "True", name, "True", "True")
    ]


def test_torch_npu_grad_scaler_passes_itself_to_a_fused_torch_optimizer(tmp_path):
    """torch_npu's GradScaler.step (every release) steps an optimizer that says _step_supports_amp_scaling with
    grad_scaler=self, which torch.optim's fused optimizers do not take: NPU709 leaves modules that scale their loss.
    torch.amp.GradScaler, and an unfused optimizer, step as on CUDA."""
    out = emulate(
        tmp_path,
        """
import torch, torch_npu
model = torch.nn.Linear(4, 4).npu()

def step(scaler, **options):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, **options)
    scaler.scale(model(torch.ones(2, 4, device="npu")).sum()).backward()
    try:
        scaler.step(opt)
    except TypeError as error:
        return "grad_scaler" in str(error)
    scaler.update()
    return "stepped"

print(step(torch.npu.amp.GradScaler(), fused=True), step(torch.npu.amp.GradScaler()))
print(step(torch.amp.GradScaler("npu"), fused=True), step(torch.npu.amp.GradScaler(enabled=False), fused=True))
""",
    )
    assert check(out).split() == ["True", "stepped", "stepped", "stepped"]
