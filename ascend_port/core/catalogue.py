"""The rule catalogue's types: stable IDs, confidence levels, docs; ``rule()`` declares one.

Every rewrite and every warning the tool makes belongs to exactly one rule. IDs are never reused: a retired rule
stays in the catalogue with ``retired=True`` so ``explain`` can still describe it.
"""

from __future__ import annotations

import enum
import re
import sys
import textwrap
from dataclasses import dataclass


class Confidence(enum.IntEnum):
    """How sure a rule is. ``high`` and ``medium`` rewrite; ``low`` only ever writes a TODO comment."""

    LOW = 1
    MEDIUM = 2
    HIGH = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Confidence:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown confidence {text!r}: use high, medium or low") from None


@dataclass(frozen=True)
class Domain:
    """A family of rules: the IDs that start with ``prefix``, and the names each output gives it."""

    prefix: str  # "NPU1"
    name: str  # Rule.domain: --select help, the text report's totals
    title: str  # commit messages and the git workflow's summary.md
    report_title: str  # the md, json and sarif reports


DOMAIN_TABLE: tuple[Domain, ...] = (
    Domain("NPU1", "device", "device layer", "device"),
    Domain("NPU2", "distributed", "distributed", "distributed"),
    Domain("NPU3", "precision", "precision and AMP", "precision"),
    Domain("NPU4", "attention", "attention and fused kernels", "attention"),
    Domain("NPU5", "kernels", "custom kernels and extensions", "custom operators"),
    Domain("NPU6", "project", "dependencies and build files", "third-party"),
    Domain("NPU7", "compile", "compile, graphs and profiling", "compile/graphs"),
    Domain("NPU8", "libraries", "libraries that take device or backend names", "libraries"),
    # Informational, but for NPU902's run settings: code that runs on the NPU as it is, slower than it could.
    Domain("NPU9", "perf", "performance", "performance"),
)
DOMAINS: dict[str, str] = {d.prefix: d.name for d in DOMAIN_TABLE}


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    confidence: Confidence
    summary: str
    doc: str
    retired: bool = False
    # Its findings are information, not work: code that runs on an NPU as it is. They are neither rewrites nor
    # TODOs in the totals, and never make `scan` fail.
    informational: bool = False
    # Its findings' lines are lines of the ported text (NPU100's is the line it adds); every other finding's line is
    # a line of the text as scanned.
    line_in_new_text: bool = False
    # Its change serves the other rules' rewrites (NPU100's `import torch_npu`): a review applies it with any of
    # them, and it is no port on its own.
    serves_others: bool = False
    # The rules whose rewrites it follows up (IDs, prefixes such as NPU4, or ALL): NPU113 adds `npu = cuda` for the
    # calls NPU101 renamed. Selected alone (tests/test_golden.py's per-rule mode), it runs with them.
    follows: tuple[str, ...] = ()
    # Off unless named by its full ID in --select (`ALL` and prefixes leave it out): a rewrite that is exact on the
    # NPU but changes the code's behaviour elsewhere (its GPU performance, its bits in some corner).
    opt_in: bool = False
    module: str = ""  # the module that declares and implements it, e.g. ascend_port.rules.device
    # The file its doc's Before/After example is, as tests/test_rule_docs.py ports it (the file type it acts on).
    example_file: str = "example.py"
    # It acts only in a project that supports the NPU already (PortOptions.npu_aware, found by the engine): its
    # examples and golden cases are ported as files of such a project (tests/test_rule_docs.py, test_golden.py).
    npu_aware: bool = False
    # Its rewrite puts a faster NPU op in place of code that runs on the NPU as it is (a fused RMSNorm): in a project
    # that runs on the NPU already, an optimisation to weigh, not work left (reports/effort.py).
    speeds_up: bool = False
    # The module-level functions its rewrites call that the port writes once into the module (NPU120's
    # `_npu_device_count`): a review applies the definition with any accepted call of it (git/review.py).
    writes: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        """The declaring module's file, relative to the repository root (for docs: where the code is)."""
        return self.module.replace(".", "/") + ".py" if self.module else ""

    @property
    def domain(self) -> str:
        return DOMAINS[self.id[:4]]

    @property
    def rewrites(self) -> bool:
        """Low-confidence rules never change code; they only leave a TODO comment."""
        return self.confidence is not Confidence.LOW


_CATALOGUE: dict[str, Rule] = {}

# A rule doc's examples are indented blocks under these headers: what the rule changes (Before/After) and code it
# must leave as it is (``Stays:``, or ``Stays (why):``); tests/test_rule_docs.py runs all of them.
_EXAMPLE_HEADER = re.compile(r"^(Before|After|Stays)(?: \([^\n]*\))?:$")


def example_header(line: str) -> str | None:
    """``Before``, ``After`` or ``Stays`` when ``line`` heads one of a rule doc's examples, else None."""
    found = _EXAMPLE_HEADER.match(line.strip())
    return found.group(1) if found else None


def rule(
    id: str,
    name: str,
    confidence: Confidence,
    summary: str,
    doc: str,
    *,
    informational: bool = False,
    line_in_new_text: bool = False,
    serves_others: bool = False,
    follows: tuple[str, ...] = (),
    opt_in: bool = False,
    example_file: str = "example.py",
    npu_aware: bool = False,
    speeds_up: bool = False,
    writes: tuple[str, ...] = (),
) -> Rule:
    """Define and register a rule; called at import time by the modules that implement the rules."""
    if id in _CATALOGUE:
        raise ValueError(f"rule {id} is defined twice")
    if id[:4] not in DOMAINS or len(id) != 6 or not id[3:].isdigit():
        raise ValueError(f"bad rule id {id!r}: expected NPUdxx with a domain digit 1-9")
    module = sys._getframe(1).f_globals.get("__name__", "")  # the caller: the module that implements the rule
    new = Rule(
        id,
        name,
        confidence,
        summary,
        textwrap.dedent(doc).strip(),
        informational=informational,
        line_in_new_text=line_in_new_text,
        serves_others=serves_others,
        follows=follows,
        opt_in=opt_in,
        module=module,
        example_file=example_file,
        npu_aware=npu_aware,
        speeds_up=speeds_up,
        writes=writes,
    )
    _CATALOGUE[id] = new
    return new


def declared() -> dict[str, Rule]:
    """The rules declared so far, by ID (the rule modules declare theirs when imported: see rules/registry.py)."""
    return _CATALOGUE
