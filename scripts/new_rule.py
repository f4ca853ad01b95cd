"""Start a new rule: its declaration (with the doc page `explain` prints) in the rule module that will implement it,
and its golden folder. What is left is the rule itself, which the tests then ask for.

    python scripts/new_rule.py NPU809 accelerate-fp8 ascend_port/rules/frameworks.py \\
        --summary "accelerate's fp8 mixed precision -> bf16 (no fp8 on the NPU)" [--confidence medium] [--ext py]

It refuses an ID or a name that is taken, an ID outside the domains (core/catalogue.DOMAINS), and a module outside
``ascend_port/rules``. Then:
  1. add the constant to the RULES of the module's transformer (or handler) and implement it;
  2. write the doc's Before/After and ``golden/NPU809/basic.in.py``/``.out.py`` (more cases beside it, including
     code that must NOT change: a case without an ``.out`` file must come out unchanged);
  3. ``pytest tests/test_golden.py tests/test_rule_docs.py -k NPU809`` until green
     (``--update-golden`` writes the findings files).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ascend_port.core.catalogue import DOMAINS, Confidence  # noqa: E402

_ID = re.compile(r"^NPU\d{3}$")
_NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")

DECLARATION = '''{constant} = rule(
    "{id}",
    "{name}",
    Confidence.{confidence},
    {summary},
    """
    What the rule changes and why, for `ascend-port explain {id}`: what fails on the NPU, what the port writes
    instead, and what it leaves alone (another device's code, a case it cannot prove).

    Before:
        import torch
    After:
        import torch
    """,
)
'''


class NewRuleError(ValueError):
    """The rule cannot be created as asked; the message says why."""


def new_rule(root: Path, rule_id: str, name: str, module: Path, summary: str, confidence: str, ext: str) -> list[Path]:
    """Declare the rule in ``module`` and create its golden case; the files written or changed."""
    rule_id, module = rule_id.upper(), (root / module if not module.is_absolute() else module)
    if not _ID.match(rule_id) or rule_id[:4] not in DOMAINS:
        raise NewRuleError(f"{rule_id}: a rule ID is NPU and three digits, the first a domain ({', '.join(DOMAINS)})")
    if not _NAME.match(name):
        raise NewRuleError(f"{name}: a rule name is lower-case words joined by hyphens (`cuda-only-dependency`)")
    rules = root / "ascend_port" / "rules"
    if not module.is_file() or not module.resolve().is_relative_to(rules.resolve()) or module.suffix != ".py":
        raise NewRuleError(f"{module}: the rule goes in a module of {rules.relative_to(root)}")
    for path in sorted(rules.rglob("*.py")):
        text = path.read_text("utf-8")
        if f'"{rule_id}"' in text:
            raise NewRuleError(f"{rule_id} is taken: {path.relative_to(root)}")
        if f'"{name}"' in text and re.search(rf'rule\(\s*"NPU\d{{3}}",\s*"{re.escape(name)}"', text):
            raise NewRuleError(f"the name {name} is taken: {path.relative_to(root)}")
    golden = root / "golden" / rule_id
    if golden.exists():
        raise NewRuleError(f"{golden.relative_to(root)} exists already")
    source = module.read_text("utf-8")
    tree = ast.parse(source)
    if not re.search(r"^from ascend_port\.core\.catalogue import .*\bConfidence\b.*\brule\b", source, re.M):
        raise NewRuleError(f"{module.relative_to(root)} does not import Confidence and rule from core.catalogue")
    # After the module's last declaration, so that its rules stay together at the top.
    declarations = [
        node
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and getattr(node.value.func, "id", "") == "rule"
    ]
    lines = source.splitlines(keepends=True)
    at = declarations[-1].end_lineno if declarations else _after_imports(tree)
    text = DECLARATION.format(
        constant=name.upper().replace("-", "_"),
        id=rule_id,
        name=name,
        confidence=Confidence.parse(confidence).name,
        summary=_string(summary),
    )
    new_source = "".join(lines[:at]) + ("" if declarations else "\n\n") + text + "".join(lines[at:])
    ast.parse(new_source)  # (never write what does not parse)
    module.write_text(new_source, "utf-8")
    golden.mkdir(parents=True)
    case = golden / f"basic.in.{ext}"
    case.write_text(f"# the code {rule_id} ports (then basic.out.{ext}: what it becomes)\nimport torch\n", "utf-8")
    out = golden / f"basic.out.{ext}"
    out.write_text(case.read_text("utf-8"), "utf-8")
    return [module, case, out]


def _after_imports(tree: ast.Module) -> int:
    imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return imports[-1].end_lineno or 0 if imports else 0


def _string(text: str) -> str:
    """``text`` as a Python string literal (double quotes, as ruff formats them)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("id", help="the new rule's ID, NPUdxx (d: its domain)")
    parser.add_argument("name", help="its name, lower-case words joined by hyphens")
    parser.add_argument("module", type=Path, help="the rule module that implements it (under ascend_port/rules)")
    parser.add_argument("--summary", required=True, help="one line: what it changes (`ascend-port rules` shows it)")
    parser.add_argument("--confidence", default="medium", help="high, medium or low (default medium)")
    parser.add_argument("--ext", default="py", help="the file type of its golden case (default py)")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        written = new_rule(args.root, args.id, args.name, args.module, args.summary, args.confidence, args.ext)
    except (NewRuleError, ValueError) as error:
        print(f"new_rule: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path.relative_to(args.root)}")
    print(
        f"next: add {args.name.upper().replace('-', '_')} to the RULES of the transformer that implements it, write "
        f"its doc's Before/After and golden case, then: pytest tests/test_golden.py tests/test_rule_docs.py -k "
        f"{args.id.upper()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
