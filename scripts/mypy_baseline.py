"""mypy with a recorded baseline: the error count of each file and error code may only go down.

Most of the recorded errors are LibCST's union types (``node.value`` of a ``BaseExpression`` that the code has
already matched by shape). New code adds none: a count above its baseline fails.

    python scripts/mypy_baseline.py            # check (exit 1 on a new error, naming it)
    python scripts/mypy_baseline.py --update   # record the current counts (after fixing some)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "mypy-baseline.json"
ERROR = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): error: (?P<text>.*?)(?:  \[(?P<code>[a-z-]+)\])?$")


def run_mypy() -> tuple[Counter[str], list[str]]:
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"mypy failed to run:\n{done.stdout}{done.stderr}")
    counts: Counter[str] = Counter()
    errors = []
    for line in done.stdout.splitlines():
        match = ERROR.match(line)
        if match:
            counts[f"{match['file']} [{match['code'] or 'misc'}]"] += 1
            errors.append(line)
    return counts, errors


def main(argv: list[str]) -> int:
    counts, errors = run_mypy()
    if "--update" in argv:
        BASELINE.write_text(json.dumps(dict(sorted(counts.items())), indent=1) + "\n", "utf-8")
        print(f"mypy baseline: {sum(counts.values())} errors recorded in {BASELINE.relative_to(ROOT)}")
        return 0
    baseline: dict[str, int] = json.loads(BASELINE.read_text("utf-8"))
    worse = {key: n for key, n in counts.items() if n > baseline.get(key, 0)}
    if worse:
        for key, n in sorted(worse.items()):
            print(f"mypy: {key}: {n} errors, baseline {baseline.get(key, 0)}")
            file, code = key.rsplit(" ", 1)
            for line in errors:
                if line.startswith(file + ":") and line.endswith(code if code != "[misc]" else ""):
                    print(f"  {line}")
        return 1
    total, recorded = sum(counts.values()), sum(baseline.values())
    note = f"; {recorded - total} fewer than recorded: run {Path(__file__).name} --update" if total < recorded else ""
    print(f"mypy: {total} errors, none new (baseline {recorded}){note}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
