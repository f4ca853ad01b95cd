"""The long fuzz run: the checks of tests/test_fuzz.py for as long as you like.

    .venv/bin/python scripts/fuzz.py [--minutes 10] [--seed 1] [--corpus] [--out .cache/fuzz-failures]

Each round ports, under a random rule selection, one of: a hypothesmith-generated program (grammar or syntax
tree) with CUDA code inserted, or a real file with CUDA code inserted at random statements and around random
expressions. Real files are the golden inputs, this interpreter's standard library and, with --corpus, the pinned
transformers/diffusers/deepspeed sources (downloaded once into .cache/corpora). Every input that breaks an
invariant is saved to --out with the reason, and the run goes on; the exit code is 1 when any did.
"""

from __future__ import annotations

import argparse
import random
import sys
import sysconfig
import time
import traceback
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "benchmarks")]

from fuzzing import GOLDEN, SELECTIONS, check, mutate, read_source  # noqa: E402


def real_files(with_corpus: bool) -> list[Path]:
    files = sorted(GOLDEN.glob("NPU*/*.in.py"))
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files += [p for p in sorted(stdlib.rglob("*.py")) if "site-packages" not in p.parts]
    if with_corpus:
        import corpora

        for name, version, sdist in corpora.PINNED:
            files += corpora.python_files(corpora.fetch(name, version, sdist=sdist))
    return [p for p in files if p.stat().st_size < 400_000]


def generated(kind: str, seed: int) -> str:
    """One hypothesmith program, reproducible from the seed."""
    import hypothesmith
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed

    strategy = hypothesmith.from_grammar() if kind == "grammar" else hypothesmith.from_node()
    out: list[str] = []

    @hseed(seed)
    @settings(max_examples=1, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def draw(source: str) -> None:
        out.append(source)

    draw()
    return out[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--corpus", action="store_true", help="also mutate the pinned PyPI sources")
    parser.add_argument("--out", type=Path, default=ROOT / ".cache" / "fuzz-failures")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rng = random.Random(args.seed)
    files = real_files(args.corpus)
    deadline = time.monotonic() + args.minutes * 60
    counts: dict[str, int] = {}
    failures = 0
    print(f"seed {args.seed}; {len(files)} real files; {args.minutes} minutes")
    round_no = 0
    while time.monotonic() < deadline:
        round_no += 1
        selection = rng.choice(SELECTIONS)
        kind = rng.choice(["file", "file", "file", "grammar", "node"])
        if kind == "file":
            origin = str(rng.choice(files))
            source = read_source(Path(origin))
        else:
            origin = f"hypothesmith {kind}"
            source = generated(kind, rng.randrange(2**32))
        source = mutate(source, rng)
        try:
            outcome = check(source, selection)
        except Exception as error:
            failures += 1
            outcome = "FAILED"
            args.out.mkdir(parents=True, exist_ok=True)
            stem = args.out / f"seed{args.seed}-round{round_no}"
            stem.with_suffix(".py").write_text(source, "utf-8", errors="surrogateescape")
            stem.with_suffix(".txt").write_text(
                f"origin: {origin}\nselection: {selection}\n\n{''.join(traceback.format_exception(error))}"
            )
            print(
                f"round {round_no}: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''} "
                f"({origin}) -> {stem}.py"
            )
        counts[outcome] = counts.get(outcome, 0) + 1
        if round_no % 100 == 0:
            print(f"round {round_no}: {counts}", flush=True)
    print(f"{round_no} rounds: {counts}; {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
