"""Sample the hunks of a port for a human review, and count the verdicts of a review (issue 15's closing note).

Sampling runs ``ascend-port apply . --dry-run --no-git`` in the tree (nothing is written there), splits the diff
into hunks with unidiff and draws N of them with a seeded generator; the same tree, tool version, N and seed always
give the same sample. Each sampled hunk is written with its file and header and two blank lines, ``verdict:`` and
``note:``, for the reviewer:

    python scripts/sample_hunks.py .cache/corpora/diffusers-0.42.1 -o review-diffusers.md
    python scripts/sample_hunks.py --corpus deepspeed -n 150 --seed 0 -o review-deepspeed.md
    python scripts/sample_hunks.py --diff port.diff --name deepspeed-0.16.5 -o review-deepspeed.md

``--corpus NAME`` takes the pinned distribution of benchmarks/corpora.py (downloaded once into .cache/corpora);
``--diff FILE`` samples a diff saved earlier instead of running the port. The port is the ``ascend_port`` this
interpreter imports (PYTHONPATH=/some/checkout runs another version of the tool).

A sheet quotes the reviewed project's code: write it outside the repository (or under the gitignored .cache/), never
commit it.

A verdict is ``ok`` (right, or harmless), ``breaks`` (breaks code that worked, on CUDA, NPU or another device) or
``unsure``. ``--verdicts`` reads filled files back and prints the counts:

    python scripts/sample_hunks.py --verdicts review-deepspeed.md review-diffusers.md review-accelerate.md
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import unidiff

ROOT = Path(__file__).resolve().parent.parent
VERDICTS = {  # what a reviewer may write -> the verdict counted
    "ok": "ok",
    "good": "ok",
    "correct": "ok",
    "breaks": "breaks working code",
    "breaks working code": "breaks working code",
    "broken": "breaks working code",
    "bad": "breaks working code",
    "wrong": "breaks working code",
    "unsure": "unsure",
    "?": "unsure",
}
ORDER = ("ok", "breaks working code", "unsure", "unreviewed")
META = re.compile(r"^<!-- sample_hunks (?P<fields>.*) -->$", re.M)
SECTION = re.compile(r"^## (?P<number>\d+)/(?P<total>\d+) · (?P<path>.+?) · hunk (?P<hunk>\d+) of \d+$")
HEADER = re.compile(r"^`(?P<header>@@ .*)`$")
VERDICT = re.compile(r"^verdict:[ \t]*(?P<verdict>.*?)[ \t]*$", re.I)


@dataclass(frozen=True)
class Hunk:
    path: str  # the file, relative to the tree
    index: int  # 1-based position of the hunk in its file
    of: int  # how many hunks the file has
    header: str  # the @@ line
    body: str  # the lines after the @@ line


def port_diff(tree: Path, jobs: int) -> str:
    """The diff of ``ascend-port apply . --dry-run --no-git`` run in ``tree``; errors are reported on stderr."""
    command = [sys.executable, "-c", "from ascend_port.cli import main; main()", "apply", ".", "--dry-run"]
    command += ["--no-git", "--exit-zero", "--jobs", str(jobs)]
    env = {**os.environ, "COLUMNS": "10000"}
    result = subprocess.run(command, cwd=tree, env=env, capture_output=True)
    stderr = result.stderr.decode("utf-8", "replace")
    if result.returncode not in (0, 1, 2) or "Traceback" in stderr:
        raise SystemExit(f"ascend-port failed (exit {result.returncode}):\n{stderr[-3000:]}")
    for line in stderr.splitlines():
        if line.startswith("error: "):
            print(f"warning: the port left a file unchanged: {line[7:]}", file=sys.stderr)
    return result.stdout.decode("utf-8", "surrogateescape")


def split_hunks(diff: str) -> list[Hunk]:
    hunks = []
    for patched in unidiff.PatchSet(diff):
        path = patched.path[2:] if patched.path.startswith(("a/", "b/")) else patched.path
        path = path[2:] if path.startswith("./") else path
        for i, hunk in enumerate(patched, 1):
            header, _, body = str(hunk).partition("\n")
            hunks.append(Hunk(path, i, len(patched), header, body))
    return hunks


def sample(hunks: list[Hunk], n: int, seed: int) -> list[Hunk]:
    """``n`` hunks (all when there are fewer) drawn with ``random.Random(seed)``, in diff order."""
    chosen = random.Random(seed).sample(range(len(hunks)), min(n, len(hunks)))
    return [hunks[i] for i in sorted(chosen)]


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def review_sheet(name: str, hunks: list[Hunk], chosen: list[Hunk], seed: int, source: str) -> str:
    from ascend_port import __version__

    files = len({h.path for h in hunks})
    lines = [
        f"# Hunk review: {name}",
        "",
        f"<!-- sample_hunks name={'_'.join(name.split())} hunks={len(hunks)} files={files} sampled={len(chosen)} seed={seed} -->",
        f"{len(chosen)} of the {len(hunks)} hunks in {files} files that ascend-port {__version__} writes for {source},"
        f" drawn with seed {seed}.",
        "",
        "After each `verdict:` write `ok` (the hunk is right, or harmless), `breaks` (it breaks code that worked: on"
        " CUDA, on NPU or on another device) or `unsure`; `note:` is free text. Then: `python scripts/sample_hunks.py"
        " --verdicts THIS_FILE`.",
        "",
    ]
    for number, hunk in enumerate(chosen, 1):
        fence = _fence(hunk.body)
        lines += [f"## {number}/{len(chosen)} · {hunk.path} · hunk {hunk.index} of {hunk.of}", ""]
        lines += [f"`{hunk.header}`", "", f"{fence}diff", hunk.body.rstrip("\n"), fence, "", "verdict:", "note:", ""]
    return "\n".join(lines)


@dataclass
class Review:
    name: str
    meta: dict[str, str]
    verdicts: list[tuple[int, str, str, str]]  # (number, path, header, verdict)
    invalid: list[str]


def read_review(path: Path) -> Review:
    text = path.read_text(encoding="utf-8")
    meta_match = META.search(text)
    meta = dict(f.split("=", 1) for f in meta_match["fields"].split()) if meta_match else {}
    review = Review(meta.get("name", path.stem), meta, [], [])
    current: tuple[int, str] | None = None
    header = ""
    fence = ""
    for line in text.splitlines():
        if fence:  # inside a hunk's diff: nothing there is a section or a verdict
            if line == fence:
                fence = ""
            continue
        if line.startswith("```"):
            fence = line[: len(line) - len(line.lstrip("`"))]
            continue
        if section := SECTION.match(line):
            current, header = (int(section["number"]), section["path"]), ""
        elif (match := HEADER.match(line)) and current:
            header = match["header"]
        elif (verdict := VERDICT.match(line)) and current:
            word = verdict["verdict"].strip().strip("`*").lower()
            if word and word not in VERDICTS:
                review.invalid.append(f"{path}: hunk {current[0]} ({current[1]}): unknown verdict {word!r}")
            review.verdicts.append((*current, header, VERDICTS.get(word, "unreviewed") if word else "unreviewed"))
            current = None
    return review


def print_counts(reviews: list[Review]) -> None:
    totals: Counter[str] = Counter()
    for review in reviews:
        counts = Counter(v for *_, v in review.verdicts)
        totals.update(counts)
        of = f" (of {review.meta['hunks']} hunks, seed {review.meta['seed']})" if "hunks" in review.meta else ""
        print(f"{review.name}: {len(review.verdicts)} sampled hunks{of}")
        for verdict in ORDER:
            print(f"  {verdict:<20} {counts[verdict]:>4}")
        broken = [(n, p, h) for n, p, h, v in review.verdicts if v == "breaks working code"]
        for number, path, header in broken:
            print(f"    breaks: #{number} {path} {header}")
    if len(reviews) > 1:
        print(f"all: {sum(totals.values())} sampled hunks")
        for verdict in ORDER:
            print(f"  {verdict:<20} {totals[verdict]:>4}")


def _corpus_tree(name: str) -> Path:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import corpora

    for corpus_name, version, sdist in (*corpora.MULTI_DEVICE, *corpora.PINNED):
        if corpus_name == name:
            root = corpora.fetch(corpus_name, version, sdist=sdist)
            return root / f"{corpus_name}-{version}" if sdist else root
    raise SystemExit(f"no pinned corpus {name!r} in benchmarks/corpora.py")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", nargs="?", type=Path, help="the source tree to port (read only)")
    parser.add_argument("--corpus", help="a pinned distribution of benchmarks/corpora.py instead of a tree")
    parser.add_argument("--diff", type=Path, help="sample this diff instead of running the port")
    parser.add_argument("--name", help="the project's name in the sheet (default: the tree's folder name)")
    parser.add_argument("-n", type=int, default=150, help="hunks to sample (default 150)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    parser.add_argument("-o", "--output", default="-", help="the review sheet (default: standard output)")
    parser.add_argument("--jobs", type=int, default=0, help="worker processes of the port (0: all cores)")
    parser.add_argument("--verdicts", type=Path, nargs="+", metavar="FILE", help="count the verdicts of reviews")
    args = parser.parse_args(argv)

    if args.verdicts:
        reviews = [read_review(path) for path in args.verdicts]
        print_counts(reviews)
        invalid = [line for review in reviews for line in review.invalid]
        for line in invalid:
            print(f"error: {line} (write ok, breaks or unsure)", file=sys.stderr)
        return 2 if invalid else 0

    if sum(x is not None for x in (args.tree, args.corpus, args.diff)) != 1:
        parser.error("give one of TREE, --corpus NAME or --diff FILE")
    if args.diff:
        diff, source = args.diff.read_text(encoding="utf-8", errors="surrogateescape"), str(args.diff)
        name = args.name or args.diff.stem
    else:
        tree = _corpus_tree(args.corpus) if args.corpus else args.tree
        if not tree.is_dir():
            parser.error(f"{tree} is not a folder")
        diff, source, name = port_diff(tree, args.jobs), tree.name, args.name or tree.resolve().name
    hunks = split_hunks(diff)
    chosen = sample(hunks, args.n, args.seed)
    sheet = review_sheet(name, hunks, chosen, args.seed, source)
    if args.output == "-":
        sys.stdout.write(sheet)
    else:
        Path(args.output).write_text(sheet, encoding="utf-8", errors="surrogateescape")
        files = len({h.path for h in hunks})
        print(f"{args.output}: {len(chosen)} of {len(hunks)} hunks ({files} files), seed {args.seed}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
