"""scripts/new_rule.py: a new rule starts as a declaration beside the module's others, with its doc and a golden
case; what is taken or malformed is refused, and nothing is written then."""

from __future__ import annotations

import ast
import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location("new_rule_script", ROOT / "scripts" / "new_rule.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the rule package (the script reads every rule module for taken IDs and names)."""
    shutil.copytree(ROOT / "ascend_port" / "rules", tmp_path / "ascend_port" / "rules")
    return tmp_path


def test_a_new_rule_is_declared_beside_the_modules_rules_with_a_golden_case(tree: Path) -> None:
    script = _script()
    module = Path("ascend_port/rules/frameworks.py")
    before = (tree / module).read_text("utf-8")
    written = script.new_rule(tree, "NPU809", "accelerate-fp8", module, 'fp8 -> "bf16"', "high", "py")
    assert [p.relative_to(tree).as_posix() for p in written] == [
        "ascend_port/rules/frameworks.py",
        "golden/NPU809/basic.in.py",
        "golden/NPU809/basic.out.py",
    ]
    after = (tree / module).read_text("utf-8")
    declarations = [
        node.targets[0].id  # type: ignore[attr-defined]
        for node in ast.parse(after).body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and getattr(node.value.func, "id", "") == "rule"
    ]
    old = [n for n in declarations if n != "ACCELERATE_FP8"]
    assert declarations == [*old, "ACCELERATE_FP8"]  # (last of the module's declarations, before its code)
    start = after.index("ACCELERATE_FP8 = rule(")
    added = after[start : after.index("\n)\n", start) + 3]  # (the declaration, to its closing parenthesis)
    assert start < after.index("\nclass ")
    assert 'Confidence.HIGH,\n    "fp8 -> \\"bf16\\"",' in added and "Before:" in added and "After:" in added
    assert after.replace(added, "") == before  # (nothing else of the module changed)


@pytest.mark.parametrize(
    ("rule_id", "name", "message"),
    [
        ("NPU101", "new-name", "NPU101 is taken: ascend_port/rules/device/torch_cuda.py"),
        ("NPU099", "new-name", "NPU099: a rule ID is NPU and three digits, the first a domain"),
        ("NPU809", "Bad_Name", "Bad_Name: a rule name is lower-case words joined by hyphens"),
        ("NPU809", "cuda-only-dependency", "the name cuda-only-dependency is taken"),
    ],
)
def test_what_is_taken_or_malformed_is_refused(tree: Path, rule_id: str, name: str, message: str) -> None:
    script = _script()
    module = Path("ascend_port/rules/frameworks.py")
    before = (tree / module).read_text("utf-8")
    with pytest.raises(script.NewRuleError, match=message.replace("(", r"\(")):
        script.new_rule(tree, rule_id, name, module, "summary", "medium", "py")
    assert (tree / module).read_text("utf-8") == before and not (tree / "golden").exists()


def test_the_module_must_be_a_rule_module(tree: Path) -> None:
    script = _script()
    (tree / "elsewhere.py").write_text("x = 1\n")
    with pytest.raises(script.NewRuleError, match="the rule goes in a module of ascend_port/rules"):
        script.new_rule(tree, "NPU809", "new-name", Path("elsewhere.py"), "summary", "medium", "py")
