"""The speed regression guard (issue 27): today's port against an earlier commit of the tool and against a plain
LibCST parse-and-print, on the same files and the same cores, paired and repeated; the figures go to a file.

    .venv/bin/python benchmarks/bench_regression.py [--against f42c16a] [--corpus diffusers==0.42.1 ...]
        [--runs 3] [--jobs 2] [--out benchmarks/results/regression.md]

For each corpus (pinned PyPI sources, benchmarks/corpora.py), ``--runs`` rounds each run, one after the other:
  - today:      ``apply --dry-run --no-cache --other-devices drop`` (the port of every file, the device model on);
  - today-keep: the same with the project's default (a project that supports the NPU is reported, not rewritten):
    it must cost no more than porting it;
  - earlier:    the ``--against`` commit's ``apply --dry-run --no-cache``, run from a ``git archive`` of it;
  - baseline:   a LibCST parse-and-print of every .py file, in as many processes as ``--jobs``.
Both tools run as installed: pip compiles a package's bytecode when it installs it, so the bytecode of today's
package and of the earlier one is compiled before the first run (into a folder of this run's own, and never
counted), even where PYTHONDONTWRITEBYTECODE is set; the LibCST baseline's is already in site-packages.
Every figure is the median of its runs; CPU time (user + system of the process and its workers) is the measure to
compare, wall time moves with other load. Then today's warm run (a second run over a filled cache), the peak
resident memory of today's cold run (the process and its workers, summed) and the 95th-percentile time of one file
(each file ported on its own in one process, cold). Nothing here is timed by the tests: CI runs no benchmark.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora
from bench_apply import baseline, measured

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_AGAINST = "f42c16a"  # the last commit before the device model (issue 27's reference)
DEFAULT_CORPORA = ("diffusers==0.42.1", "transformers==5.23.0")

# Runs the tool of the folder given first, as its console script would: `python -c` with that folder first on the
# path, so that an earlier commit's package is imported, not the installed one.
_LAUNCH = "import sys; sys.path.insert(0, sys.argv.pop(1)); from ascend_port.cli import main; sys.argv[0] = 'ascend-port'; main()"


@dataclass
class Run:
    wall_s: float
    cpu_s: float
    peak_rss_mib: float = 0.0


@dataclass
class Measure:
    label: str
    runs: list[Run] = field(default_factory=list)

    @property
    def cpu_s(self) -> float:
        return statistics.median(r.cpu_s for r in self.runs)

    @property
    def wall_s(self) -> float:
        return statistics.median(r.wall_s for r in self.runs)

    @property
    def peak_rss_mib(self) -> float:
        return max(r.peak_rss_mib for r in self.runs)


def installed_env(bytecode: Path) -> dict[str, str]:
    """The environment of a tool run as installed: its bytecode read from (and, at the first run, written to)
    ``bytecode``, whatever PYTHONDONTWRITEBYTECODE says."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": str(bytecode), "PYTHONPATH": ""}


def compile_bytecode(package: Path, bytecode: Path) -> None:
    """Compile ``package``'s modules into ``bytecode`` (what pip does at install), outside every measure."""
    command = [sys.executable, "-m", "compileall", "-q", str(package / "ascend_port")]
    subprocess.run(command, env=installed_env(bytecode), check=True, stdout=subprocess.DEVNULL)


def run_tool(package: Path, target: Path, args: Sequence[str], cache_home: Path, bytecode: Path) -> Run:
    env = {**installed_env(bytecode), "XDG_CACHE_HOME": str(cache_home)}
    run = measured([sys.executable, "-c", _LAUNCH, str(package), "apply", str(target), "--dry-run", *args], env)
    if run.exit_code not in (0, 1):
        raise SystemExit(f"{package}: apply failed ({run.exit_code}):\n{run.stderr[-2000:]}")
    return Run(run.seconds, run.cpu_seconds, run.tree_rss_mib)


def earlier_package(commit: str, into: Path) -> Path:
    """The tool's package at ``commit``, unpacked from ``git archive`` (the work tree is not touched)."""
    archive = into / "earlier.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), commit], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "earlier", filter="data")
    return into / "earlier"


def file_latencies(target: Path, args: Sequence[str], bytecode: Path) -> list[float]:
    """Seconds to port each file on its own (cold, one process, the run's project options), from a child process."""
    code = f"""
import json, sys, time
from pathlib import Path
sys.path.insert(0, {str(ROOT)!r})
from ascend_port.run import engine
from ascend_port.cli import main
times = []
original = engine.port_file
def timed(path, config, caches=None):
    start = time.perf_counter()
    try:
        return original(path, config, caches)
    finally:
        times.append(time.perf_counter() - start)
engine.port_file = timed
sys.argv = ["ascend-port", "apply", {str(target)!r}, "--dry-run", "--no-cache", "--jobs", "1", *{list(args)!r}]
try:
    main()
except SystemExit:
    pass
sys.stdout = sys.__stdout__
print("LATENCIES " + json.dumps(times))
"""
    with tempfile.TemporaryDirectory() as cache_home:
        env = {**installed_env(bytecode), "XDG_CACHE_HOME": cache_home}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("LATENCIES ")), None)
    if line is None:
        raise SystemExit(f"file latencies: no result\n{out.stderr[-2000:]}")
    return json.loads(line.split(" ", 1)[1])


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure(
    name: str, version: str, sdist: bool, against: Path, commit: str, runs: int, jobs: int, bytecode: Path
) -> dict:
    root = corpora.fetch(name, version, sdist=sdist)
    files = corpora.python_files(root)
    jobs_args = ["--jobs", str(jobs)]
    today = Measure("today (--other-devices drop)")
    keep = Measure("today, the project's default")
    earlier = Measure(f"{commit}")
    base = Measure("LibCST parse + print")
    for _ in range(runs):  # paired: one of each per round, so that load drifts hit all alike
        with tempfile.TemporaryDirectory() as cache:
            today.runs.append(
                run_tool(ROOT, root, ["--no-cache", "--other-devices", "drop", *jobs_args], Path(cache), bytecode)
            )
            keep.runs.append(run_tool(ROOT, root, ["--no-cache", *jobs_args], Path(cache), bytecode))
            earlier.runs.append(run_tool(against, root, ["--no-cache", *jobs_args], Path(cache), bytecode))
        wall, cpu = baseline(files, jobs)
        base.runs.append(Run(wall, cpu))
    warm = Measure("today, warm")
    with tempfile.TemporaryDirectory() as cache:
        run_tool(ROOT, root, ["--other-devices", "drop", *jobs_args], Path(cache), bytecode)  # fills the cache
        for _ in range(runs):
            warm.runs.append(run_tool(ROOT, root, ["--other-devices", "drop", *jobs_args], Path(cache), bytecode))
    latencies = file_latencies(root, ["--other-devices", "drop"], bytecode)
    return {
        "corpus": f"{name} {version}",
        "files": len(files),
        "lines": sum(p.read_bytes().count(b"\n") for p in files),
        "jobs": jobs,
        "runs": runs,
        "measures": {m.label: [asdict(r) for r in m.runs] for m in (today, keep, earlier, base, warm)},
        "today_cpu_s": today.cpu_s,
        "today_wall_s": today.wall_s,
        "keep_cpu_s": keep.cpu_s,
        "earlier_cpu_s": earlier.cpu_s,
        "earlier_wall_s": earlier.wall_s,
        "baseline_cpu_s": base.cpu_s,
        "baseline_wall_s": base.wall_s,
        "warm_cpu_s": warm.cpu_s,
        "warm_wall_s": warm.wall_s,
        "peak_rss_mib": today.peak_rss_mib,
        "file_p50_ms": 1000 * percentile(latencies, 0.50),
        "file_p95_ms": 1000 * percentile(latencies, 0.95),
        "file_max_ms": 1000 * max(latencies),
    }


def render(results: list[dict], commit: str, note: str) -> str:
    rows = [
        "# Speed regression guard (benchmarks/bench_regression.py)",
        "",
        note,
        "",
        f"Medians of {results[0]['runs']} paired runs; CPU = user + system of the process and its workers. "
        f"'{commit}' is the earlier commit (before the device model). Ratios > 1: today is faster.",
        "",
        "| corpus | files, lines | today CPU (wall) | today vs " + commit + " (CPU) | vs LibCST parse+print "
        "(wall, CPU) | warm (wall): vs LibCST | NPU project, report-only vs port (CPU) | peak RSS | file p50 / p95 "
        "/ max |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        rows.append(
            f"| {r['corpus']} | {r['files']:,}, {r['lines'] / 1e6:.2f} M | {r['today_cpu_s']:.1f} s "
            f"({r['today_wall_s']:.1f} s) | {r['earlier_cpu_s']:.1f} s: {r['earlier_cpu_s'] / r['today_cpu_s']:.2f}x "
            f"| {r['baseline_wall_s']:.1f} s, {r['baseline_cpu_s']:.1f} s: {r['baseline_wall_s'] / r['today_wall_s']:.1f}x,"
            f" {r['baseline_cpu_s'] / r['today_cpu_s']:.1f}x | {r['warm_wall_s']:.2f} s: "
            f"{r['baseline_wall_s'] / r['warm_wall_s']:.0f}x | {r['keep_cpu_s']:.1f} s vs {r['today_cpu_s']:.1f} s | "
            f"{r['peak_rss_mib']:.0f} MiB | {r['file_p50_ms']:.1f} / {r['file_p95_ms']:.1f} / {r['file_max_ms']:.0f} ms |"
        )
    return "\n".join(rows) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", default=DEFAULT_AGAINST, help=f"earlier commit (default {DEFAULT_AGAINST})")
    parser.add_argument("--corpus", action="append", help=f"name==version (default {', '.join(DEFAULT_CORPORA)})")
    parser.add_argument("--runs", type=int, default=3, help="paired runs of each measure (default 3)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "regression.md")
    args = parser.parse_args()
    pinned = {name: sdist for name, _, sdist in (*corpora.PINNED, *corpora.MULTI_DEVICE)}
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "ascend_port"], capture_output=True)
    note = (
        f"Today: {head.stdout.strip()}{' with uncommitted changes' if dirty.stdout.strip() else ''}; "
        f"{os.cpu_count()} cores; Python {sys.version.split()[0]}; {time.strftime('%Y-%m-%d')}."
    )
    results = []
    with tempfile.TemporaryDirectory(prefix="ascend-port-regression-") as tmp:
        against = earlier_package(args.against, Path(tmp))
        bytecode = Path(tmp) / "bytecode"
        for package in (ROOT, against):
            compile_bytecode(package, bytecode)
        for spec in args.corpus or DEFAULT_CORPORA:
            name, _, version = spec.partition("==")
            sdist = pinned.get(name, False)
            result = measure(name, version, sdist, against, args.against, max(1, args.runs), args.jobs, bytecode)
            results.append(result)
            print(render([result], args.against, note).splitlines()[-1], flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(results, args.against, note))
    args.out.with_suffix(".json").write_text(json.dumps({"note": note, "results": results}, indent=1) + "\n")
    print(f"written: {args.out} and {args.out.with_suffix('.json')}")


if __name__ == "__main__":
    main()
