"""Every rule's documented example (``ascend-port explain``, SARIF help) is what the tool really does.

Each rule doc has one ``Before:`` and one ``After:`` block of indented code. The convention the docs follow:

* The Before block, dedented, is a whole file, run as written: it is named as its rule declares
  (``Rule.example_file``: ``example.py`` but for the rules of other file types) and ported through the real pipeline,
  ``handler_for(name).port(data, selection, PortOptions())`` (``PortOptions(npu_aware=True)`` for a rule that
  acts only in a project that supports the NPU already, ``Rule.npu_aware``). Most Python rules act only on names they can resolve
  (``torch.cuda.synchronize()`` only where ``torch`` is imported), so the examples import what they use.
* Selection: every rule except NPU100 (import-torch-npu), which runs only for its own example. NPU100 adds
  ``import torch_npu`` under ``import torch`` in nearly every ported module: its own example shows that once, and
  leaving it out elsewhere keeps each After about its rule (the reports also take a rule's pattern and
  replacement from the first line its example changes). All other rules run, so an After shows what a user gets
  on those lines, other rules' edits included (NPU303's example also gets NPU103's device string).
* The output (the file itself when nothing changes) must equal the dedented After block line for line, ignoring
  trailing newlines, with two narrow abbreviations:

  1. in a line that names a rule (``NPU`` and three digits: a TODO or another comment the tool writes, or a
     report line), ``...`` stands for any text on that line (long TODO messages are shortened so);
  2. an indented line that is only ``...`` stands for one or more lines, each blank or indented at least as deep
     as the ``...``: an elided body (of the attention helpers that NPU400-NPU405 write into the module, which
     their prose describes). At the left margin ``...`` is literal.

  Everything else is compared exactly, TODO comments included.
* The rule being documented must be among the findings: an example shows its own rule at work, whatever else
  runs on the same lines.
* A ``Stays:`` block (``Stays (why):`` may say why) is code the rule must leave alone, another device's above all:
  ported the same way, it must come out unchanged, without a finding of the rule.
* Retired rules are left out (they no longer fire).
* NPU503 (.cu/.cuh sources) is report only: the file must stay unchanged, and its After is the line
  ``(unchanged; `ascend-port scan` reports)`` followed by one ``file:line  RULE  confidence  message`` line per
  finding, the columns of the scan's table.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from golden_cases import RULE_TARGETS

from ascend_port.core.catalogue import Rule, example_header
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for
from ascend_port.rules.registry import all_rules

REPORT_ONLY = {"NPU503"}
UNCHANGED = "(unchanged; `ascend-port scan` reports)"
_NAMES_A_RULE = re.compile(r"\bNPU\d{3}\b")

RULES = [r for r in all_rules() if not r.retired]


def example(doc: str, header: str) -> str:
    """The dedented block of indented lines under ``header`` (``Before:``/``After:``/``Stays``), without the blank
    lines around it."""
    lines = doc.splitlines()
    start = next(i for i, line in enumerate(lines) if example_header(line) == header.rstrip(":")) + 1
    block: list[str] = []
    for line in lines[start:]:
        if line.strip() and not line.startswith((" ", "\t")):
            break  # the next header, or prose
        block.append(line)
    return textwrap.dedent("\n".join(block)).strip("\n")


def after_pattern(after: str) -> re.Pattern[str]:
    """``after`` as a regular expression, with the two abbreviations of the module docstring."""
    parts = []
    for line in after.split("\n"):
        indent = " " * (len(line) - len(line.lstrip(" ")))
        if line.strip() == "..." and indent:
            one = f"(?:{indent}[^\\n]*)?"  # a line indented at least as deep, or a blank one
            parts.append(f"{indent}[^\\n]*(?:\\n{one})*?")
        elif _NAMES_A_RULE.search(line):
            parts.append("[^\\n]*".join(re.escape(piece) for piece in line.split("...")))
        else:
            parts.append(re.escape(line))
    return re.compile("\n".join(parts))


def matches(output: str, after: str) -> bool:
    return after_pattern(after.rstrip("\n")).fullmatch(output.rstrip("\n")) is not None


def port(rule: Rule, before: str):
    name = rule.example_file
    handler = handler_for(Path(name))
    assert handler is not None, f"{rule.id}: no handler for {name}"
    selection = Selection() if rule.id == "NPU100" else Selection(ignore=("NPU100",))
    if rule.opt_in:
        selection = Selection(select=("ALL", rule.id), ignore=selection.ignore)  # (opt-in: runs when named)
    options = PortOptions(npu_aware=rule.npu_aware, target=RULE_TARGETS.get(rule.id))
    return name, handler.port(f"{before}\n".encode(), selection, options)


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_doc_example_reproduces(rule: Rule) -> None:
    before, after = example(rule.doc, "Before:"), example(rule.doc, "After:")
    name, ported = port(rule, before)
    assert rule.id in {f.rule.id for f in ported.findings}, f"{rule.id}'s example does not fire {rule.id}"
    if rule.id in REPORT_ONLY:
        assert ported.new_text is None, f"{rule.id} is report only, but the file changed"
        output = "\n".join(
            [UNCHANGED]
            + [f"{name}:{f.line}  {f.rule.id}  {f.rule.confidence.label}  {f.message}" for f in ported.findings]
        )
    else:
        output = ported.new_text if ported.new_text is not None else ported.source.text
    if not matches(output, after):
        assert output.rstrip("\n") == after.rstrip("\n")  # (fails: pytest shows the difference)


def test_the_comparison_can_fail() -> None:
    """A wrong After fails, and the abbreviations match no more than they say."""
    rule = next(r for r in RULES if r.id == "NPU101")
    before, after = example(rule.doc, "Before:"), example(rule.doc, "After:")
    output = port(rule, before)[1].new_text
    assert matches(output, after)
    assert not matches(output, after.replace("npu", "cuda", 1))
    assert not matches(output, after + "\nextra = 1")
    todo = "# TODO(ascend-port): NPU107 [low] torch.cuda.memory_usage has no torch.npu counterpart"
    assert matches(f"{todo}: port by hand\nx = 1", f"{todo}...\nx = 1")
    assert not matches(f"{todo}: port by hand\nx = 2", f"{todo}...\nx = 1")
    assert not matches("x = f(1)", "x = f(...)")  # not a line that names a rule: `...` is literal
    assert matches("def f():\n    a = 1\n\n    return a\n\n\ny = 2", "def f():\n    ...\n\n\ny = 2")
    assert not matches("def f():\n    a = 1\nb = 2\ny = 2", "def f():\n    ...\ny = 2")
    assert not matches("x = 1\ny = 2", "...\ny = 2")  # at the left margin, `...` is literal


def test_each_example_file_is_a_file_type_the_tool_ports() -> None:
    """A rule's example file names a file the tool has a handler for, and the rules of other file types say theirs."""
    assert all(handler_for(Path(r.example_file)) is not None for r in RULES)
    assert {r.example_file for r in RULES if r.id.startswith("NPU6")} >= {"requirements.txt", "run.sh", "Dockerfile"}


STAYING = [r for r in RULES if any(example_header(line) == "Stays" for line in r.doc.splitlines())]


@pytest.mark.parametrize("rule", STAYING, ids=lambda r: r.id)
def test_rule_doc_stays_example_stays(rule: Rule) -> None:
    code = example(rule.doc, "Stays:")
    _, ported = port(rule, code)
    assert ported.new_text is None, f"{rule.id}'s Stays example changed:\n{ported.new_text}"
    assert rule.id not in {f.rule.id for f in ported.findings}, f"{rule.id} fires on its Stays example"


def test_stays_examples_are_read_and_can_fail() -> None:
    """The Stays examples are found (twenty rules have one), and one that the rule does change fails the check."""
    assert len(STAYING) >= 20
    rule = next(r for r in RULES if r.id == "NPU103")
    changed = example(rule.doc, "Before:")
    assert port(rule, changed)[1].new_text is not None  # (so the check above would fail on it)
