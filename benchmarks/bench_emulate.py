"""A small MLP training step on plain CPU vs on the emulated npu (ascend-port emulate).

    python benchmarks/bench_emulate.py             # runs both and prints the ratio
    python benchmarks/bench_emulate.py --hooks     # the emulated step with the run-hazard recording on and off
Runs the npu half as `ascend-port emulate -- python benchmarks/bench_emulate.py --device npu`. With ``--hooks`` the
emulated process times blocks of steps alternately with the recording on and off (native.cpp's record_op, turned
off for every thread) and prints the best and median of each: one process, so the machine's load hits both alike."""

from __future__ import annotations

import argparse
import subprocess
import sys
import time


def step_time(device: str, steps: int, hooks: bool = False) -> float:
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 512), torch.nn.GELU(), torch.nn.Linear(512, 10)
    ).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(128, 256, device=device)
    y = torch.randint(0, 10, (128,), device=device)

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    for _ in range(5):
        step()
    if hooks:
        return hook_times(step, steps)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - start) / steps


def hook_times(step, steps: int) -> float:
    import torch

    native = torch._ascend_port_emulate_native
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(10):
        for enabled in (False, True):
            native.enable_op_stats(enabled)
            start = time.perf_counter()
            for _ in range(max(steps // 10, 1)):
                step()
            times[enabled].append((time.perf_counter() - start) / max(steps // 10, 1))
    for enabled, found in times.items():
        found.sort()
        print(f"hooks {'on' if enabled else 'off'}: best {found[0] * 1e3:.2f} ms/step, median {found[5] * 1e3:.2f}")
    return times[True][0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default=None)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--hooks", action="store_true", help="the emulated step with the hazard recording on and off")
    args = parser.parse_args()
    if args.device:
        print(step_time(args.device, args.steps, args.hooks))
        return
    cpu = step_time("cpu", args.steps)
    cli = "import sys; from ascend_port.cli import main; sys.argv[0] = 'ascend-port'; main()"
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            cli,
            "emulate",
            "--",
            sys.executable,
            __file__,
            "--device",
            "npu",
            "--steps",
            str(args.steps),
            *(["--hooks"] if args.hooks else []),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    print(*out.strip().splitlines()[:-1], sep="\n")
    npu = float(out.strip().splitlines()[-1])
    print(f"cpu {cpu * 1e3:.2f} ms/step, emulated npu {npu * 1e3:.2f} ms/step, ratio {npu / cpu:.2f}x")


if __name__ == "__main__":
    main()
