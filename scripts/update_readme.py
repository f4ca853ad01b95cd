"""Write README.md's rule table from the rule catalogue (tests/test_rule_modules.py fails while it is stale).

python scripts/update_readme.py          # rewrite the table in place
python scripts/update_readme.py --check  # exit 1 if the table is stale
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ascend_port.rules.registry import markdown_table

README = Path(__file__).resolve().parent.parent / "README.md"
START = "<!-- rules: generated from the catalogue by scripts/update_readme.py; do not edit by hand -->\n"
END = "<!-- end of rules -->\n"
BLOCK = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)


def with_current_table(text: str) -> str:
    if not BLOCK.search(text):
        raise SystemExit(f"{README}: no rule table between {START.strip()} and {END.strip()}")
    return BLOCK.sub(lambda _: START + markdown_table() + END, text, count=1)


def main(argv: list[str]) -> int:
    text = README.read_text("utf-8")
    new = with_current_table(text)
    if "--check" in argv:
        if new != text:
            print(f"{README.name}: the rule table is stale; run python scripts/update_readme.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(new, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
