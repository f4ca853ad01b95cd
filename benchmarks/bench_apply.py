"""Time `ascend-port apply --dry-run` against a plain LibCST parse-and-print of the same files, on the same cores,
in one run.

    .venv/bin/python benchmarks/bench_apply.py [--jobs 2] [--corpus transformers==5.23.0]

The baseline is what a straightforward LibCST codemod pays before it does any work: parse every .py file and
print it back. The tool is run as its console script, start-up included.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import libcst as cst

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402


def _parse_and_print(paths: list[Path]) -> int:
    done = 0
    for path in paths:
        try:
            cst.parse_module(path.read_bytes()).code  # noqa: B018 - printing is the work being measured
            done += 1
        except Exception:  # noqa: BLE001 - a file LibCST cannot parse costs what it costs
            pass
    return done


def baseline(files: list[Path], jobs: int) -> float:
    batches = [files[i:i + 16] for i in range(0, len(files), 16)]
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        sum(pool.map(_parse_and_print, batches))
    return time.perf_counter() - start


def tool(root: Path, jobs: int) -> tuple[float, int]:
    exe = Path(sys.executable).with_name("ascend-port")
    start = time.perf_counter()
    result = subprocess.run([str(exe), "apply", str(root), "--dry-run", "--jobs", str(jobs)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode not in (0, 1):
        raise SystemExit(f"ascend-port failed ({result.returncode}):\n{result.stderr}")
    print("   ", result.stderr.strip().replace("\n", " "))
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, peak_kib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--corpus", default="==".join(corpora.TRANSFORMERS))
    args = parser.parse_args()
    name, version = args.corpus.split("==")
    root = corpora.fetch(name, version)
    files = corpora.python_files(root)
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    print(f"{name} {version}: {len(files)} files, {lines:,} lines, {args.jobs} jobs")
    tool_s, peak_kib = tool(root, args.jobs)
    print(f"  ascend-port apply --dry-run: {tool_s:6.1f} s  {len(files) / tool_s:7.0f} files/s  "
          f"peak RSS of one process {peak_kib / 1024:.0f} MiB")
    base_s = baseline(files, args.jobs)
    print(f"  LibCST parse + print:        {base_s:6.1f} s  {len(files) / base_s:7.0f} files/s")
    print(f"  speed-up: {base_s / tool_s:.1f}x")


if __name__ == "__main__":
    main()
