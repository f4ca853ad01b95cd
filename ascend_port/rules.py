"""The rule catalogue: stable IDs, confidence levels, docs, and rule selection.

Every rewrite and every warning the tool makes belongs to exactly one rule. IDs are never reused: a retired rule
stays in the catalogue with ``retired=True`` so ``explain`` can still describe it.
"""

from __future__ import annotations

import enum
import textwrap
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable


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

    @property
    def domain(self) -> str:
        return DOMAINS[self.id[:4]]

    @property
    def rewrites(self) -> bool:
        """Low-confidence rules never change code; they only leave a TODO comment."""
        return self.confidence is not Confidence.LOW


_CATALOGUE: dict[str, Rule] = {}


def rule(id: str, name: str, confidence: Confidence, summary: str, doc: str) -> Rule:
    """Define and register a rule; called at import time by the modules that implement the rules."""
    if id in _CATALOGUE:
        raise ValueError(f"rule {id} is defined twice")
    if id[:4] not in DOMAINS or len(id) != 6 or not id[3:].isdigit():
        raise ValueError(f"bad rule id {id!r}: expected NPUdxx with a domain digit 1-7")
    new = Rule(id, name, confidence, summary, textwrap.dedent(doc).strip())
    _CATALOGUE[id] = new
    return new


# The catalogue as an earlier run of this very code recorded it (see use_snapshot), or None. It stands in for the
# rule modules, whose import (LibCST and every transform) costs more than a run answered from the cache.
_SNAPSHOT: dict[str, Rule] | None = None
_modules_loaded = False


def all_rules() -> list[Rule]:
    return sorted(_catalogue().values(), key=lambda r: r.id)


def get_rule(rule_id: str) -> Rule:
    try:
        return _catalogue()[rule_id.upper()]
    except KeyError:
        raise KeyError(f"unknown rule {rule_id!r}: `ascend-port rules` lists them") from None


def _catalogue() -> dict[str, Rule]:
    if _SNAPSHOT is not None and not _modules_loaded:
        return _SNAPSHOT
    _load_rule_modules()
    return _CATALOGUE


def _load_rule_modules() -> None:
    global _modules_loaded
    if _modules_loaded:
        return
    # Importing the transform and codemod packages registers their rules.
    import ascend_port.codemods  # noqa: F401
    import ascend_port.transforms  # noqa: F401

    _modules_loaded = True


def snapshot_rules() -> list[dict[str, object]]:
    """Every rule as plain data, for ``use_snapshot`` in a later process."""
    return [{"id": r.id, "name": r.name, "confidence": r.confidence.label, "summary": r.summary, "doc": r.doc,
             "retired": r.retired} for r in all_rules()]


def use_snapshot(data: object) -> bool:
    """Answer ``all_rules``/``get_rule`` from ``snapshot_rules()`` output instead of importing the rule modules.
    The caller vouches that it was made by this same code (the result cache keys it by the tool's fingerprint);
    data that does not check out is refused (False) and the modules are imported as usual."""
    global _SNAPSHOT
    try:
        rules = {}
        for item in data:  # type: ignore[union-attr]
            if not all(isinstance(item[k], str) for k in ("id", "name", "confidence", "summary", "doc")) \
                    or type(item["retired"]) is not bool or item["id"] in rules:
                return False
            rules[item["id"]] = Rule(item["id"], item["name"], Confidence.parse(item["confidence"]),
                                     item["summary"], item["doc"], item["retired"])
    except (TypeError, KeyError, ValueError):
        return False
    if not rules:
        return False
    _SNAPSHOT = rules
    return True


@dataclass(frozen=True)
class Selection:
    """Which rules run. ``--select``/``--ignore`` take IDs or prefixes (``NPU2``) or ``ALL``."""

    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    min_confidence: Confidence = Confidence.LOW

    @staticmethod
    def _matches(rule_id: str, patterns: Iterable[str]) -> bool:
        return any(p == "ALL" or rule_id.startswith(p) for p in patterns)

    def enabled(self, rule: Rule) -> bool:
        """A rule is enabled when selected, not ignored and at or above the confidence threshold."""
        # Asked for every rule of every transformer of every file: the answer is kept per rule object.
        known = self._verdicts.get(rule.id)
        if known is not None and known[0] is rule:
            return known[1]
        verdict = (
            self._matches(rule.id, self.select)
            and not self._matches(rule.id, self.ignore)
            and rule.confidence >= self.min_confidence
        )
        self._verdicts[rule.id] = (rule, verdict)
        return verdict

    @cached_property
    def _verdicts(self) -> dict[str, tuple[Rule, bool]]:
        return {}  # (a cached_property writes the instance dict directly, which a frozen dataclass allows)

    def __getstate__(self) -> dict[str, object]:
        # The verdicts hold whole rules: a worker that receives the selection works them out again.
        return {name: value for name, value in self.__dict__.items() if name != "_verdicts"}

    def validate(self) -> None:
        """Reject patterns that match no rule, so a typo never silently selects nothing."""
        known = [r.id for r in all_rules()]
        for pattern in (*self.select, *self.ignore):
            if pattern != "ALL" and not any(rid.startswith(pattern) for rid in known):
                raise ValueError(f"--select/--ignore: {pattern!r} matches no rule (try `ascend-port rules`)")


def parse_patterns(values: Iterable[str] | None) -> tuple[str, ...]:
    """Split comma-separated CLI values and normalise case: ``npu1,NPU205`` -> ``("NPU1", "NPU205")``."""
    out: list[str] = []
    for value in values or ():
        out.extend(p.strip().upper() for p in value.split(",") if p.strip())
    return tuple(out)
