"""How much of what humans did when they ported public models to Ascend the tool's port does (issue 30).

    .venv/bin/python benchmarks/bench_human_ports.py [--cache DIR] [--mirrors DIR] [--offline] [--only ID ...]
        [--write-manifest] [--out benchmarks/results/human_ports.md]

benchmarks/human_ports.json pins file pairs: a public model's upstream file (a PyPI distribution and a path in
it, or a GitHub repository, commit and path) and the humans' Ascend port of that same file. For each pair the
script counts the humans' introductions: each (function, op) whose op (human_ops.py: a torch_npu kernel, a fused
optimizer, torchair) the port uses more often than the upstream function does. A pair's ``function_map`` names,
for a function the humans added, the upstream function it replaces (their NPU processor for the xformers one; a
function the humans added that it does not name is matched against the whole file); with ``only_mapped`` only the
mapped functions are counted: an NPU function set beside the one it mirrors (diffusers' AttnProcessorNPU beside
AttnProcessor2_0 in one file, a kernel plugin's forward for transformers' LlamaMLP.forward).

Then it ports the upstream file with ascend-port as a user would (``apply --no-git --other-devices drop``, the
default attention mode, the tool of this checkout, the file alone in a folder) and says, per introduction, whether
the tool's port uses the same op more often in the same function than the upstream did; a function is credited
with the ops of the module-level helpers it calls (the tool writes ``_npu_flash_attn`` once and calls it). A
markdown report goes to ``--out``: the fractions (fused ops, and all ops with the torch_npu 1.x affinity ops and
format casts), per construct (what the op replaces: hand-written attention, SDPA, RMSNorm, ...) and per pair, with
the TODOs the tool left where it did not reproduce an introduction.

Nothing third-party is committed: the files live in a gitignored cache (``--cache``, default
$ASCEND_PORT_HUMAN_PORTS or .cache/human_ports): PyPI distributions are downloaded there with pip unless
``--offline``; GitHub files cannot be downloaded by this script: it copies them from a git mirror of the repository
(``--mirrors``: a folder of ``owner+name/repo`` git directories, as the project's fetch tool writes them) or names
what is missing and stops. ``--write-manifest`` records the counted introductions in the manifest (the numbers the
report is read against; the script recounts them on every run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora
from human_ops import MODULE, ModuleOps, attention_kind, construct_of, module_ops, todo_rules

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "benchmarks" / "human_ports.json"
DEFAULT_CACHE = Path(os.environ.get("ASCEND_PORT_HUMAN_PORTS", ROOT / ".cache" / "human_ports"))
DEFAULT_MIRRORS = Path("/work/.mirror")
TOOL_ARGS = ("apply", "--no-git", "--other-devices", "drop", "--exit-zero", "--no-cache", "--jobs", "1")


class Missing(Exception):
    """A pinned file is not in the cache and cannot be had offline."""


# ----------------------------------------------------------------------------------------------------- the files


def _pypi_tree(cache: Path, spec: str, sdist: bool, offline: bool) -> Path:
    name, version = spec.split("==")
    target = cache / "pypi" / f"{name}-{version}{'-sdist' if sdist else ''}"
    if (target / ".complete").exists():
        return target
    if offline:
        raise Missing(f"PyPI {spec}{' (sdist)' if sdist else ''}: not in {target} (run once without --offline)")
    try:
        return corpora.fetch(name, version, sdist=sdist, cache=cache / "pypi")
    except subprocess.CalledProcessError:
        raise Missing(f"PyPI {spec}: pip download failed") from None


def _github_file(cache: Path, mirrors: Path, pin: dict[str, str]) -> Path:
    repo, commit, path = pin["github"], pin["commit"], pin["path"]
    target = cache / "github" / repo.replace("/", "+") / commit / path
    if target.exists():
        return target
    mirror = mirrors / repo.replace("/", "+") / "repo"
    shown = subprocess.run(
        ["git", "--git-dir", str(mirror), "show", f"{commit}:{path}"], capture_output=True, check=False
    )
    if shown.returncode:
        raise Missing(f"GitHub {repo}@{commit[:12]}:{path}: not in {target}, and no git mirror of it in {mirror}")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(shown.stdout)
    return target


def pinned_text(pin: dict[str, Any], cache: Path, mirrors: Path, offline: bool) -> str:
    if "pypi" in pin:
        tree = _pypi_tree(cache, pin["pypi"], pin.get("sdist", False), offline)
        return (tree / pin["path"]).read_text("utf-8")
    return _github_file(cache, mirrors, pin).read_text("utf-8")


def describe(pin: dict[str, Any]) -> str:
    if "pypi" in pin:
        return f"PyPI `{pin['pypi']}{' sdist' if pin.get('sdist') else ''}` `{pin['path']}`"
    return f"`{pin['github']}@{pin['commit'][:10]}` `{pin['path']}`"


def tool_port(text: str, name: str) -> str:
    """The upstream file as ascend-port (this checkout) ports it, alone in a folder."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "project" / name
        path.parent.mkdir()
        path.write_text(text, "utf-8")
        launch = "import sys; from ascend_port.cli import main; sys.argv[0] = 'ascend-port'; main()"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": tmp}
        run = subprocess.run(
            [sys.executable, "-c", launch, *TOOL_ARGS, str(path.parent)], env=env, capture_output=True, text=True
        )
        if run.returncode:
            raise RuntimeError(f"ascend-port failed on {name}: {run.stderr[-2000:]}")
        return path.read_text("utf-8")


# -------------------------------------------------------------------------------------------------- the measure


# A human op and the ops the tool writes that do its work: the same optimizer on torch's own fused kernel (which
# torch_npu registers, without NpuFused*'s limits: NPU709), and fused attention, which computes inside it the
# masked softmax the humans fused alone. The report says which op reproduced each introduction, and counts the
# introductions reproduced by the humans' own op apart.
EQUIVALENTS: dict[str, tuple[str, ...]] = {
    "NpuFusedAdamW": ("torch.optim.AdamW(fused)",),
    "NpuFusedAdam": ("torch.optim.Adam(fused)",),
    "NpuFusedSGD": ("torch.optim.SGD(fused)",),
    "npu_scaled_masked_softmax": ("npu_fusion_attention",),
    "npu_dropout_with_add_softmax": ("npu_fusion_attention",),
}


@dataclass
class Introduction:
    function: str  # in the upstream's names
    op: str
    construct: str
    fused: bool
    reproduced: bool = False
    tool_ops: list[str] = field(default_factory=list)  # what the tool introduced in that function instead
    todos: list[str] = field(default_factory=list)  # the TODOs the tool left there
    by: str | None = None  # the op of the tool's port that reproduced it, when not the humans' own


@dataclass
class PairResult:
    pair: dict[str, Any]
    introductions: list[Introduction]
    tool_extra: list[tuple[str, str]]  # (function, op) the tool introduced that the humans did not
    error: str | None = None


def _introduced(base: ModuleOps, ported: ModuleOps, rename: dict[str, str], only: set[str] | None) -> Counter:
    """(function in the upstream's names, op) -> how many more uses ``ported`` has than ``base``."""
    gained: Counter[tuple[str, str]] = Counter()
    for (function, op), n in ported.uses.items():
        function = rename.get(function, function)
        if only is not None and function not in only:
            continue
        extra = n - base.in_function(function, op)
        if extra > 0:
            gained[(function, op)] += extra
    return gained


def measure(pair: dict[str, Any], upstream: str, port: str, tool: str) -> PairResult:
    rename: dict[str, str] = pair.get("function_map", {})  # port's function -> the upstream one it replaces
    only = set(rename.values()) if pair.get("only_mapped") else None  # functions set beside the ones they replace
    # The tool's helpers are followed from their callers; the humans' are named in the manifest's function_map.
    base, human, by_tool = module_ops(upstream).through_helpers(), module_ops(port), module_ops(tool).through_helpers()
    humans = _introduced(base, human, rename, only)
    tools = _introduced(base, by_tool, {}, only)
    tool_ops_anywhere = {op for (_, op) in tools}
    results = []
    for function, op in sorted(humans):
        construct, fused = construct_of(op)
        if construct == "attention":
            construct = attention_kind(base.sources.get(function, upstream if function == MODULE else ""))
        known = function in base.spans or function == MODULE
        by = next(
            (
                o
                for o in (op, *EQUIVALENTS.get(op, ()))
                if ((function, o) in tools if known else o in tool_ops_anywhere)
            ),
            None,
        )
        results.append(
            Introduction(
                function,
                op,
                construct,
                fused,
                by is not None,
                sorted(o for (f, o) in tools if f == function and o != op),
                todo_rules(tool, by_tool.spans[function]) if function in by_tool.spans else [],
                by if by != op else None,
            )
        )
    extra = sorted(k for k in tools if k not in humans and k[1] not in {op for (_, op) in humans})
    return PairResult(pair, results, extra)


def run_pair(pair: dict[str, Any], cache: Path, mirrors: Path, offline: bool) -> PairResult:
    upstream = pinned_text(pair["upstream"], cache, mirrors, offline)
    port = pinned_text(pair["port"], cache, mirrors, offline)
    tool = tool_port(upstream, Path(pair["upstream"]["path"]).name)
    return measure(pair, upstream, port, tool)


# --------------------------------------------------------------------------------------------------- the report


def _fraction(done: int, total: int) -> str:
    return f"{done}/{total} ({100 * done / total:.0f} %)" if total else "0/0"


def _mark(i: Introduction) -> str:
    if i.reproduced:
        return f"yes, by {i.by}" if i.by else "yes"
    instead = ", ".join(i.tool_ops) or "-"
    todos = ", ".join(i.todos) or "-"
    return f"**no** (tool there: ops {instead}; TODOs {todos})"


def report(results: list[PairResult], commit: str) -> str:
    all_i = [i for r in results for i in r.introductions]
    fused = [i for i in all_i if i.fused]
    lines = [
        "# Human Ascend ports against the tool's port (benchmarks/bench_human_ports.py)",
        "",
        f"Tool: {commit}, `ascend-port {' '.join(TOOL_ARGS)}` on each upstream file alone; {date.today()}.",
        "",
        "An introduction is a (function, op) whose op the human port uses more often than the upstream function;",
        "reproduced: the tool's port of the upstream file uses that op, or an op that does its work (torch's own fused",
        "kernel for an NpuFused optimizer, fused attention for a masked softmax), more often in the same function",
        "(anywhere in the file for a function the humans added). Fused: without the torch_npu 1.x affinity ops and",
        "format casts.",
        "",
        f"**Fused ops reproduced: {_fraction(sum(i.reproduced for i in fused), len(fused))}** (by the humans' own op: "
        f"{_fraction(sum(i.reproduced and not i.by for i in fused), len(fused))}); all ops: "
        f"{_fraction(sum(i.reproduced for i in all_i), len(all_i))}; pairs: {len(results)}.",
        "",
        "## By construct",
        "",
        "| construct | fused | humans' introductions | reproduced | missing (pair: function op) |",
        "|---|---|---|---|---|",
    ]
    by_construct: dict[str, list[tuple[str, Introduction]]] = defaultdict(list)
    for r in results:
        for i in r.introductions:
            by_construct[i.construct].append((r.pair["id"], i))
    for construct, items in sorted(by_construct.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        missing = "; ".join(f"{pid}: `{i.function}` {i.op}" for pid, i in items if not i.reproduced) or "-"
        done = sum(i.reproduced for _, i in items)
        lines.append(f"| {construct} | {'yes' if items[0][1].fused else 'no'} | {len(items)} | {done} | {missing} |")
    lines += [
        "",
        "## By pair",
        "",
        "| pair | model | upstream | port | introductions (fused) | reproduced (fused) |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        p = r.pair
        if r.error:
            lines.append(
                f"| {p['id']} | {p['model']} | {describe(p['upstream'])} | {describe(p['port'])} | error: {r.error} | |"
            )
            continue
        f = [i for i in r.introductions if i.fused]
        lines.append(
            f"| {p['id']} | {p['model']} | {describe(p['upstream'])} | {describe(p['port'])} | "
            f"{len(r.introductions)} ({len(f)}) | {sum(i.reproduced for i in r.introductions)} "
            f"({sum(i.reproduced for i in f)}) |"
        )
    lines += ["", "## Each introduction", ""]
    for r in results:
        if r.error or not r.introductions:
            continue
        lines += [f"### {r.pair['id']}", ""]
        if r.pair.get("note"):
            lines += [r.pair["note"], ""]
        lines += ["| function | op | construct | reproduced |", "|---|---|---|---|"]
        lines += [f"| `{i.function}` | {i.op} | {i.construct} | {_mark(i)} |" for i in r.introductions]
        if r.tool_extra:
            extra = ", ".join(f"`{f}` {op}" for f, op in r.tool_extra)
            lines += ["", f"The tool also introduced (not in the human port): {extra}."]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _commit() -> str:
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "ascend_port"], capture_output=True, text=True
    )
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--offline", action="store_true", help="download nothing: what the cache lacks is an error")
    parser.add_argument("--only", nargs="*", help="pair IDs")
    parser.add_argument("--write-manifest", action="store_true", help="record the counted introductions")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "human_ports.md")
    args = parser.parse_args(argv)
    manifest = json.loads(MANIFEST.read_text("utf-8"))
    pairs = [p for p in manifest["pairs"] if not args.only or p["id"] in args.only]
    results, missing = [], []
    for pair in pairs:
        try:
            results.append(run_pair(pair, args.cache, args.mirrors, args.offline))
            print(f"{pair['id']}: measured", file=sys.stderr)
        except Missing as exc:
            missing.append(f"{pair['id']}: {exc}")
    if missing:
        print("Missing from the cache (nothing was measured):\n  " + "\n  ".join(missing), file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report(results, _commit()), "utf-8")
    if args.write_manifest:
        counted = {r.pair["id"]: r for r in results}
        for pair in manifest["pairs"]:
            if pair["id"] in counted:
                pair["introductions"] = [
                    {"function": i.function, "op": i.op, "construct": i.construct}
                    for i in counted[pair["id"]].introductions
                ]
        MANIFEST.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", "utf-8")
    fused = [i for r in results for i in r.introductions if i.fused]
    print(f"fused ops reproduced: {_fraction(sum(i.reproduced for i in fused), len(fused))}; report: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
