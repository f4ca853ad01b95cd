"""Time `ascend-port apply --dry-run`, cold (empty result cache) and warm (second run), against a plain LibCST
parse-and-print of the same files on the same cores, in one run, on pinned PyPI sources.

    .venv/bin/python benchmarks/bench_apply.py [--jobs 2] [--corpus transformers==5.23.0 ...] [--json out.json]

The baseline is what a straightforward LibCST codemod pays before it does any work: parse every .py file and
print it back. The tool is run as its console script, start-up included, with XDG_CACHE_HOME pointing to a fresh
folder for the cold run, kept for the warm one. The "fixed part" is what a run costs besides porting: the same
command with --no-cache and one Dockerfile rule selected (NPU630), so that no Python file has anything to port.
Peak RSS is sampled over the tool's whole process tree (the parent and its workers, summed) and also given for its
largest single process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import libcst as cst

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora

MIB = 1024 * 1024


def _parse_and_print(paths: list[Path]) -> int:
    done = 0
    for path in paths:
        try:
            cst.parse_module(path.read_bytes()).code  # noqa: B018 - printing is the work being measured
            done += 1
        except Exception:
            pass
    return done


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def baseline(files: list[Path], jobs: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the workers)."""
    batches = [files[i : i + 16] for i in range(0, len(files), 16)]
    cpu, start = _children_cpu(), time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        sum(pool.map(_parse_and_print, batches))
    return time.perf_counter() - start, _children_cpu() - cpu


class TreeRss:
    """Samples the summed resident memory of a process and its descendants (Linux /proc) every few ms."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid, self.interval, self.peak = pid, interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _tree(self) -> list[int]:
        """The process and its descendants, from the kernel's list of each one's children (reading every process's
        stat instead would take CPU from the tool being measured)."""
        tree, frontier = [self.pid], [self.pid]
        while frontier:
            found = []
            for pid in frontier:
                try:
                    with open(f"/proc/{pid}/task/{pid}/children", "rb") as handle:
                        found += [int(child) for child in handle.read().split()]
                except (OSError, ValueError):
                    continue
            tree += found
            frontier = found
        return tree

    @staticmethod
    def _rss(pid: int) -> int:
        try:
            with open(f"/proc/{pid}/statm", "rb") as handle:
                return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            return 0

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(self._rss(pid) for pid in self._tree()))
            self._stop.wait(self.interval)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


@dataclass
class ToolRun:
    seconds: float
    cpu_seconds: float  # user + system of the tool and its workers: less sensitive to other load than wall time
    tree_rss_mib: float  # parent and workers, summed
    process_rss_mib: float  # the largest single process
    summary: str


@dataclass
class Measured:
    seconds: float
    exit_code: int
    cpu_seconds: float  # user + system of the process and the workers it waited for
    process_rss_mib: float  # ru_maxrss of wait4: the largest single process among them
    tree_rss_mib: float  # the peak of the process tree's summed RSS
    stderr: str


def measured(command: list[str], env: dict[str, str]) -> Measured:
    """Run ``command`` (its output dropped, its errors kept in a file: a pipe could fill and stall it), with its
    wall time, CPU time and peak memory."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
        sampler = TreeRss(process.pid)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        tree_peak = sampler.stop()
        stderr.seek(0)
        text = stderr.read().decode("utf-8", "replace")
    cpu = usage.ru_utime + usage.ru_stime
    return Measured(elapsed, os.waitstatus_to_exitcode(status), cpu, usage.ru_maxrss / 1024, tree_peak / MIB, text)


def tool(root: Path, jobs: int, cache_home: Path, *extra: str) -> ToolRun:
    exe = Path(sys.executable).with_name("ascend-port")
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    run = measured([str(exe), "apply", str(root), "--dry-run", "--jobs", str(jobs), *extra], env)
    if run.exit_code not in (0, 1, 2):
        raise SystemExit(f"ascend-port failed ({run.exit_code}):\n{run.stderr}")
    summary = " ".join(run.stderr.split())[-200:]
    return ToolRun(run.seconds, run.cpu_seconds, run.tree_rss_mib, run.process_rss_mib, summary)


@dataclass
class CorpusResult:
    corpus: str
    files: int
    lines: int
    jobs: int
    baseline_s: float
    baseline_cpu_s: float
    cold: ToolRun
    warm: ToolRun
    fixed: ToolRun | None = None  # no rule with anything to port, no cache: what a run costs besides porting

    def lines_out(self) -> list[str]:
        rows = [
            f"{self.corpus}: {self.files} files, {self.lines:,} lines, {self.jobs} jobs",
            f"    {self.cold.summary}",
        ]
        measured = (
            ("LibCST parse + print", self.baseline_s, self.baseline_cpu_s, None),
            ("apply --dry-run, cold", self.cold.seconds, self.cold.cpu_seconds, self.cold),
            ("apply --dry-run, warm", self.warm.seconds, self.warm.cpu_seconds, self.warm),
        )
        if self.fixed is not None:
            measured += (("fixed part (no rule)", self.fixed.seconds, self.fixed.cpu_seconds, self.fixed),)
        for label, seconds, cpu, rss in measured:
            ratio = (
                ""
                if rss is None
                else f"  {self.baseline_s / seconds:5.1f}x the baseline ({self.baseline_cpu_s / cpu:5.1f}x in CPU time)"
            )
            memory = (
                ""
                if rss is None
                else f"  peak RSS {rss.tree_rss_mib:4.0f} MiB (largest process {rss.process_rss_mib:3.0f} MiB)"
            )
            rows.append(
                f"  {label:<22} {seconds:6.2f} s ({cpu:6.1f} s CPU) {self.files / seconds:6.0f} files/s{ratio}{memory}"
            )
        return rows


def _fingerprint() -> str:
    code = "from ascend_port.run.cache import tool_fingerprint; print(tool_fingerprint())"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


def measure(name: str, version: str, sdist: bool, jobs: int, with_baseline: bool, repeat: int = 1) -> CorpusResult:
    root = corpora.fetch(name, version, sdist=sdist)
    files = corpora.python_files(root)
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    for _ in range(3):
        # The cache is keyed by the tool's own code: an edit of the package between the two runs (a shared work
        # tree) would make the warm run a cold one. Measure again then.
        before = _fingerprint()
        # The fastest of --repeat runs of each measure (the baseline's too): other load only ever slows a run.
        colds = []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory(prefix="ascend-port-bench-cache-") as cache_home:
                colds.append(tool(root, jobs, Path(cache_home)))
        cold = min(colds, key=lambda run: run.seconds)
        with tempfile.TemporaryDirectory(prefix="ascend-port-bench-cache-") as cache_home:
            tool(root, jobs, Path(cache_home))  # fills the cache
            warm = min((tool(root, jobs, Path(cache_home)) for _ in range(repeat)), key=lambda run: run.seconds)
        with tempfile.TemporaryDirectory(prefix="ascend-port-bench-cache-") as cache_home:
            fixed = min(
                (tool(root, jobs, Path(cache_home), "--no-cache", "--select", "NPU630") for _ in range(repeat)),
                key=lambda run: run.seconds,
            )
        if _fingerprint() == before:
            break
        print(f"  (the package changed during the {name} runs: measuring again)", flush=True)
    base, base_cpu = (
        min(baseline(files, jobs) for _ in range(repeat)) if with_baseline else (float("nan"), float("nan"))
    )
    return CorpusResult(f"{name} {version}", len(files), lines, jobs, base, base_cpu, cold, warm, fixed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--corpus", action="append", help="name==version (repeatable; default: the pinned three)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the (slow) LibCST baseline")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs of every measure (the baseline's too), the "
        "fastest of which counts: other load only ever slows a run (default 1)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    pinned = {name: (name, version, sdist) for name, version, sdist in corpora.PINNED}
    chosen = []
    for spec in args.corpus or [f"{n}=={v}" for n, v, _ in corpora.PINNED]:
        name, _, version = spec.partition("==")
        chosen.append((name, version or pinned[name][1], pinned.get(name, (0, 0, False))[2]))
    results = []
    for name, version, sdist in chosen:
        result = measure(name, version, sdist, args.jobs, not args.no_baseline, max(1, args.repeat))
        results.append(result)
        print("\n".join(result.lines_out()), flush=True)
    if len(results) > 1:
        total = CorpusResult(
            "all",
            sum(r.files for r in results),
            sum(r.lines for r in results),
            args.jobs,
            sum(r.baseline_s for r in results),
            sum(r.baseline_cpu_s for r in results),
            *(
                ToolRun(
                    sum(getattr(r, kind).seconds for r in results),
                    sum(getattr(r, kind).cpu_seconds for r in results),
                    max(getattr(r, kind).tree_rss_mib for r in results),
                    max(getattr(r, kind).process_rss_mib for r in results),
                    "",
                )
                for kind in ("cold", "warm")
            ),
        )
        print("\n".join(line for line in total.lines_out() if line.strip()))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2))


if __name__ == "__main__":
    main()
