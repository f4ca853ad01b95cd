from __future__ import annotations

import pytest
from golden_cases import CASE_OPTIONS, GOLDEN, RULE_TARGETS, Case, cases

from ascend_port.core.findings import Finding
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for
from ascend_port.rules.registry import all_rules, get_rule

CASES = cases()
OPT_IN = {r.id for r in all_rules() if r.opt_in}  # (ported with their ID selected: that is how they run)


def port(case: Case, data: bytes):
    handler = handler_for(case.handler_name)
    assert handler is not None, f"no handler for {case.handler_name.name}"
    selection = Selection(select=("ALL", case.rule)) if case.rule in OPT_IN else Selection()
    return handler.port(data, selection, options(case))


def options(case: Case) -> PortOptions:
    """The options a case is ported with: a rule that acts only in a project that supports the NPU already has its
    cases ported as files of such a project (Rule.npu_aware); one that acts for older torch-npu releases only, for
    the release golden_cases.RULE_TARGETS names; golden_cases.CASE_OPTIONS gives single cases their own."""
    own = CASE_OPTIONS.get(case.id, {})
    return PortOptions(npu_aware=get_rule(case.rule).npu_aware, **{"target": RULE_TARGETS.get(case.rule), **own})


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_golden(case: Case, request: pytest.FixtureRequest) -> None:
    data = case.input.read_bytes()
    ported = port(case, data)
    output = ported.new_text if ported.new_text is not None else ported.source.text
    if request.config.getoption("--update-golden"):
        if output == ported.source.text:
            case.expected.unlink(missing_ok=True)
        else:
            case.expected.write_bytes(ported.source.encode(output))
        return
    expected = (
        case.expected.read_bytes().decode(ported.source.encoding) if case.expected.exists() else ported.source.text
    )
    assert output == expected
    # Idempotent: the port of the port changes nothing.
    again = port(case, ported.source.encode(output))
    assert again.new_text is None or again.new_text == output


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_golden_rule_alone(case: Case) -> None:
    """The per-rule mode: the case's rule selected alone (with the rules it follows up, Rule.follows) finds at least
    what it finds beside every other rule (no rule needs another it does not declare; alone it may find more, where
    another rule claims a construct first), and its port is idempotent too."""
    data = case.input.read_bytes()
    beside = {(f.line, f.kind, f.message) for f in port(case, data).findings if f.rule.id == case.rule}
    handler = handler_for(case.handler_name)
    assert handler is not None
    follows = get_rule(case.rule).follows
    selection = Selection(select=(case.rule, *follows))
    alone = handler.port(data, selection, options(case))
    found = {(f.line, f.kind, f.message) for f in alone.findings if f.rule.id == case.rule}
    if not follows:  # (but the import its rewrites need, which NPU100 adds whatever is selected)
        others = {f.rule.id for f in alone.findings if not f.rule.serves_others} - {case.rule}
        assert not others, "a rule selected alone reported another's finding"
    assert beside <= found, f"{case.rule} alone misses: {sorted(beside - found)}"
    if alone.new_text is not None:
        again = handler.port(alone.source.encode(alone.new_text), selection, options(case))
        assert again.new_text is None or again.new_text == alone.new_text


def findings_text(findings: list[Finding]) -> str:
    """The findings file's text: ``<line> <RULE> [<confidence>] <kind>: <message>`` a line, sorted."""
    lines = []
    for f in sorted(findings, key=lambda f: (f.line, f.rule.id, f.message, f.kind)):
        assert "\n" not in f.message and "\r" not in f.message, f"multi-line message: {f.message!r}"
        lines.append(f"{f.line} {f.rule.id} [{f.rule.confidence.label}] {f.kind}: {f.message}\n")
    return "".join(lines)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_golden_findings(case: Case, request: pytest.FixtureRequest) -> None:
    actual = findings_text(port(case, case.input.read_bytes()).findings)
    if request.config.getoption("--update-golden"):
        if actual:
            case.findings.write_text(actual, "utf-8", newline="\n")
        else:
            case.findings.unlink(missing_ok=True)
        return
    # A missing file reads as empty, so a case without one must report nothing.
    expected = case.findings.read_text("utf-8") if case.findings.exists() else ""
    assert actual == expected, f"findings differ from {case.findings.relative_to(GOLDEN)}"


def test_findings_files_belong_to_cases() -> None:
    names = [c.findings for c in CASES]
    assert len(set(names)) == len(names), "two golden cases share a findings file name"
    stray = sorted(str(p.relative_to(GOLDEN)) for p in set(GOLDEN.glob("NPU*/*.findings")) - set(names))
    assert not stray, f"findings files without a golden case: {stray}"


def test_every_rule_has_a_golden_case_where_it_fires() -> None:
    fired = {
        case.rule for case in CASES if case.rule in {f.rule.id for f in port(case, case.input.read_bytes()).findings}
    }
    missing = [r.id for r in all_rules() if r.id not in fired]
    assert not missing, f"rules without a golden case in their folder that fires them: {missing}"


def test_every_rule_has_a_before_after_doc() -> None:
    for r in all_rules():
        assert "Before:" in r.doc and "After:" in r.doc, r.id
        assert r.summary and r.name, r.id


def test_outputs_parse() -> None:
    import ast

    for case in CASES:
        if case.expected.exists() and case.handler_name.suffix == ".py":
            ast.parse(case.expected.read_text("utf-8"))
