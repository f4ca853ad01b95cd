"""Which rules run: ``--select``/``--ignore`` patterns and the confidence threshold."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from ascend_port.core.catalogue import Confidence, Rule


@dataclass(frozen=True)
class Selection:
    """Which rules run. ``--select``/``--ignore`` take IDs or prefixes (``NPU2``) or ``ALL``; an opt-in rule runs
    only when ``--select`` names its full ID."""

    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    min_confidence: Confidence = Confidence.LOW

    def enabled(self, rule: Rule) -> bool:
        """A rule is enabled when selected, not ignored and at or above the confidence threshold."""
        # Asked for every rule of every transformer of every file: the answer is kept per rule object.
        known = self._verdicts.get(rule.id)
        if known is not None and known[0] is rule:
            return known[1]
        verdict = (
            (rule.id in self.select if rule.opt_in else matches(rule.id, self.select))
            and not matches(rule.id, self.ignore)
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


def matches(rule_id: str, patterns: Iterable[str]) -> bool:
    """Does a pattern (an ID, a prefix such as ``NPU2``, or ``ALL``) take ``rule_id``? (--select, --ignore, and the
    `# ascend-port: ignore[...]` comments)"""
    return any(p == "ALL" or rule_id.startswith(p) for p in patterns)


def unknown_patterns(patterns: Iterable[str], known: Iterable[str]) -> list[str]:
    """The patterns that match no rule ID of ``known``: a typo must never silently select or suppress nothing."""
    known = list(known)
    return [p for p in patterns if p != "ALL" and not any(rule_id.startswith(p) for rule_id in known)]


def parse_patterns(values: Iterable[str] | None) -> tuple[str, ...]:
    """Split comma-separated CLI values and normalise case: ``npu1,NPU205`` -> ``("NPU1", "NPU205")``."""
    out: list[str] = []
    for value in values or ():
        out.extend(p.strip().upper() for p in value.split(",") if p.strip())
    return tuple(out)
