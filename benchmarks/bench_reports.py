"""Time `ascend-port scan --format F` for each report format on a warm cache, against `--format text`, on a pinned
real project (transformers 5.23.0 by default), each format repeated and the runs interleaved.

    .venv/bin/python benchmarks/bench_reports.py [--corpus DIR] [--repeat 3] [--jobs 2] [--formats text,github,md]
        [--other-devices keep|drop] [--tree DIR] [--json out.json]

The question is what a report costs on top of the scan: `--format github` should cost what `text` costs, and md/json
only the dependency matrix's imports, cached like the port's results. Each command runs as a fresh process
(start-up included) with XDG_CACHE_HOME pointing to a private folder, warmed first by one run of every format (the
port's result cache and the reports' import cache), so every timed run is a warm one. ``--tree`` runs another copy
of the package (PYTHONPATH=DIR; for a before/after comparison, ``git archive HEAD ascend_port | tar -x -C DIR``),
with its own cache folder. On a shared machine compare the ratios to `text` in one run, not absolute seconds.

Measured for issue 20 (2 shared cores, --jobs 2, 3 warm runs each, median / text), before (HEAD's reports: every
format built the whole report and parsed every module for the dependency matrix) and after:

    mode    tree    text (s)  github  csv    sarif  md
    keep    before  1.1       12.6x   9.7x   -      9.7x
    keep    after   1.4       1.2x    1.5x   1.7x   1.4x
    drop    before  3.3       5.0x    4.5x   4.8x   5.2x
    drop    after   2.5       0.97x   1.8x   1.8x   1.9x
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora

FORMATS = ("text", "github", "csv", "sarif", "json", "md")


def command(corpus: Path, fmt: str, jobs: int, output: Path, extra: list[str]) -> list[str]:
    entry = "from ascend_port.cli import main; main()"
    scan = ["scan", str(corpus), "--format", fmt, "--output", str(output), "--exit-zero", "--jobs", str(jobs)]
    return [sys.executable, "-c", entry, *scan, *extra]


def timed(cmd: list[str], env: dict[str, str]) -> float:
    # (run outside the repository: `python -c` puts the working directory first on sys.path, before PYTHONPATH)
    start = time.perf_counter()
    cwd = env["XDG_CACHE_HOME"].rsplit("/", 1)[0]
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, help="the tree to scan (default: transformers 5.23.0's package)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--tree", type=Path, help="the folder holding the ascend_port package to time")
    parser.add_argument("--json", type=Path, help="write the timings here")
    parser.add_argument(
        "--other-devices",
        choices=("keep", "drop"),
        default="keep",
        help="drop: port transformers as an NPU-only fork (rewrites and edits instead of reports)",
    )
    args = parser.parse_args()
    corpus = (args.corpus or corpora.fetch(*corpora.TRANSFORMERS) / "transformers").resolve()
    formats = [f for f in args.formats.split(",") if f]
    extra = ["--other-devices", args.other_devices]
    with tempfile.TemporaryDirectory(prefix="bench-reports-") as tmp:
        env = dict(os.environ, XDG_CACHE_HOME=str(Path(tmp) / "cache"))
        if args.tree is not None:
            env["PYTHONPATH"] = str(args.tree.resolve())
        check = subprocess.run(
            [sys.executable, "-c", "import ascend_port; print(ascend_port.__file__)"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp,
        )
        print(f"package: {check.stdout.strip()}\ncorpus: {corpus}", flush=True)
        output = Path(tmp) / "report"
        for fmt in formats:  # warm-up: the result cache, then each format's own cache (the imports of md/json)
            print(f"warm-up {fmt}: {timed(command(corpus, fmt, args.jobs, output, extra), env):.1f} s", flush=True)
        times: dict[str, list[float]] = {fmt: [] for fmt in formats}
        for round_ in range(args.repeat):
            for fmt in formats:
                times[fmt].append(timed(command(corpus, fmt, args.jobs, output, extra), env))
            print(f"round {round_ + 1}: " + ", ".join(f"{f} {times[f][-1]:.1f} s" for f in formats), flush=True)
    base = statistics.median(times[formats[0]])
    print(f"\n| format | runs (s) | median (s) | median / {formats[0]} |\n|---|---|---:|---:|")
    for fmt in formats:
        runs = ", ".join(f"{t:.1f}" for t in times[fmt])
        median = statistics.median(times[fmt])
        print(f"| {fmt} | {runs} | {median:.1f} | {median / base:.2f} |")
    if args.json:
        args.json.write_text(json.dumps({"corpus": str(corpus), "tree": str(args.tree), "times": times}, indent=2))


if __name__ == "__main__":
    main()
