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
            (rule.id in self.select if rule.opt_in else self._matches(rule.id, self.select))
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

    def validate(self, known: Iterable[str]) -> None:
        """Reject patterns that match no rule of ``known`` (IDs), so a typo never silently selects nothing."""
        known = list(known)
        for pattern in (*self.select, *self.ignore):
            if pattern != "ALL" and not any(rid.startswith(pattern) for rid in known):
                raise ValueError(f"--select/--ignore: {pattern!r} matches no rule (try `ascend-port rules`)")


def parse_patterns(values: Iterable[str] | None) -> tuple[str, ...]:
    """Split comma-separated CLI values and normalise case: ``npu1,NPU205`` -> ``("NPU1", "NPU205")``."""
    out: list[str] = []
    for value in values or ():
        out.extend(p.strip().upper() for p in value.split(",") if p.strip())
    return tuple(out)
