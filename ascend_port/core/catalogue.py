"""The rule catalogue's types: stable IDs, confidence levels, docs; ``rule()`` declares one.

Every rewrite and every warning the tool makes belongs to exactly one rule. IDs are never reused: a retired rule
stays in the catalogue with ``retired=True`` so ``explain`` can still describe it.
"""

from __future__ import annotations

import enum
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
    def parse(cls, text: str) -> "Confidence":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown confidence {text!r}: use high, medium or low") from None


DOMAINS: dict[str, str] = {
    "NPU1": "device",
    "NPU2": "distributed",
    "NPU3": "precision",
    "NPU4": "attention",
    "NPU5": "kernels",
    "NPU6": "project",
    "NPU7": "compile",
}


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

    @property
    def domain(self) -> str:
        return DOMAINS[self.id[:4]]

    @property
    def rewrites(self) -> bool:
        """Low-confidence rules never change code; they only leave a TODO comment."""
        return self.confidence is not Confidence.LOW


_CATALOGUE: dict[str, Rule] = {}


def rule(id: str, name: str, confidence: Confidence, summary: str, doc: str, *, informational: bool = False) -> Rule:
    """Define and register a rule; called at import time by the modules that implement the rules."""
    if id in _CATALOGUE:
        raise ValueError(f"rule {id} is defined twice")
    if id[:4] not in DOMAINS or len(id) != 6 or not id[3:].isdigit():
        raise ValueError(f"bad rule id {id!r}: expected NPUdxx with a domain digit 1-7")
    new = Rule(id, name, confidence, summary, textwrap.dedent(doc).strip(), informational=informational)
    _CATALOGUE[id] = new
    return new


def declared() -> dict[str, Rule]:
    """The rules declared so far, by ID (the rule modules declare theirs when imported: see rules/registry.py)."""
    return _CATALOGUE
