"""A small MLP training step on plain CPU vs on the emulated npu (ascend-port emulate).

    python benchmarks/bench_emulate.py             # runs both and prints the ratio
Runs the npu half as `ascend-port emulate -- python benchmarks/bench_emulate.py --device npu`."""

from __future__ import annotations

import argparse
import subprocess
import sys
import time


def step_time(device: str, steps: int) -> float:
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
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default=None)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    if args.device:
        print(step_time(args.device, args.steps))
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
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    npu = float(out.strip().splitlines()[-1])
    print(f"cpu {cpu * 1e3:.2f} ms/step, emulated npu {npu * 1e3:.2f} ms/step, ratio {npu / cpu:.2f}x")


if __name__ == "__main__":
    main()
