"""One rule, one module: each rule ID is declared, and written in code, by a single module under ascend_port/rules/.

A reader who greps for NPU610 lands on the module that declares the rule and implements it. Other modules that
need a rule (a message that mentions it, a writer of another file type) go through the rule object (``RULE.id``),
never the literal. Documentation is not code: docstrings, the summary and documentation of ``rule(...)`` and the
``help=`` text of command-line options may name any rule.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

from test_layout import modules

from ascend_port.rules.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent
RULE_ID = re.compile(r"NPU\d{3}")


def _documentation(tree: ast.Module) -> set[int]:
    """The ids of the string nodes that are documentation."""
    docs: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            docs.add(id(body[0].value))
        if isinstance(node, ast.Call) and _is_rule_call(node):
            docs.update(id(sub) for arg in node.args[1:] for sub in ast.walk(arg))
        if isinstance(node, ast.keyword) and node.arg == "help":
            docs.update(id(sub) for sub in ast.walk(node.value))
    return docs


def _is_rule_call(node: ast.Call) -> bool:
    return (
        isinstance(node.func, ast.Name)
        and node.func.id == "rule"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
    )


class Survey:
    """Where each rule is declared (module, variable), where its ID is written in code, and which names load."""

    def __init__(self) -> None:
        self.declared: dict[str, list[tuple[str, str | None]]] = defaultdict(list)
        self.written: dict[str, set[tuple[str, int]]] = defaultdict(set)
        self.loads: dict[str, set[str]] = {}
        for module, path in modules().items():
            self.read(module, ast.parse(path.read_text("utf-8")))

    def read(self, module: str, tree: ast.Module) -> None:
        docs = _documentation(tree)
        self.loads[module] = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _is_rule_call(node.value):
                target = node.targets[0]
                name = target.id if isinstance(target, ast.Name) else None
                self.declared[node.value.args[0].value].append((module, name))  # type: ignore[attr-defined]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                for rule_id in RULE_ID.findall(node.value):
                    self.written[rule_id].add((module, node.lineno))


SURVEY = Survey()


def test_every_rule_is_declared_once_in_the_rules_package() -> None:
    assert sorted(SURVEY.declared) == [r.id for r in all_rules()]
    for rule_id, places in SURVEY.declared.items():
        assert len(places) == 1, f"{rule_id} declared in {places}"
        module, name = places[0]
        assert module.startswith("ascend_port.rules."), f"{rule_id} is declared outside ascend_port/rules: {module}"
        assert name, f"{rule_id}: bind the rule to a module-level name"


def test_each_rule_id_is_written_in_code_only_by_its_module() -> None:
    elsewhere = [
        f"{module}:{line} writes {rule_id} (declared in {SURVEY.declared[rule_id][0][0]}): use the rule object's .id"
        for rule_id, places in SURVEY.written.items()
        for module, line in sorted(places)
        if rule_id in SURVEY.declared and module != SURVEY.declared[rule_id][0][0]
    ]
    assert not elsewhere, "\n".join(elsewhere)


def test_each_rule_is_used_by_the_module_that_declares_it() -> None:
    """Declared and implemented together: the module reads its own rule object (a finding, a RULES tuple, .id)."""
    unused = [
        f"{rule_id} ({module}.{name})"
        for rule_id, [(module, name)] in SURVEY.declared.items()
        if name not in SURVEY.loads[module]
    ]
    assert not unused, f"rules their own module never uses: {unused}"


def test_the_survey_sees_what_it_must() -> None:
    survey = Survey.__new__(Survey)
    survey.declared, survey.written, survey.loads = defaultdict(list), defaultdict(set), {}
    survey.read(
        "m",
        ast.parse(
            '"""NPU101 in a docstring."""\nX = rule("NPU999", "n", HIGH, "NPU102", "NPU103")\n'
            'f(X, note=f"see NPU104")\nopt(help="e.g. NPU105")\n'
        ),
    )
    assert dict(survey.declared) == {"NPU999": [("m", "X")]}
    assert dict(survey.written) == {"NPU999": {("m", 2)}, "NPU104": {("m", 3)}}
    assert "X" in survey.loads["m"]


def test_each_rule_knows_its_module() -> None:
    """``Rule.module`` (shown by ``explain`` and README's table) is the module that declares it."""
    for r in all_rules():
        assert r.module == SURVEY.declared[r.id][0][0], r.id
        assert (ROOT / r.path).is_file(), r.id


def test_readme_rule_table_is_generated_from_the_catalogue() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from update_readme import README, with_current_table
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    text = README.read_text("utf-8")
    assert with_current_table(text) == text, "README's rule table is stale: run python scripts/update_readme.py"
    assert with_current_table(text.replace("| NPU101 | cuda-method | high |", "| NPU101 | cuda | high |")) == text
