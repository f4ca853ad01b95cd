"""The reports' performance section: what the port made faster (the fused-op rules' rewrites, NPU902's run settings),
what it left and why (the fused-op rules' findings it did not apply, the perf domain's notes, float64 on the device,
attention left on flash-attn), and the expected effect of each item left, with its published source
(data/perf_figures.json: a figure only where a source gives one, ``not measured`` otherwise)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ascend_port.core.catalogue import Rule
from ascend_port.core.findings import Finding
from ascend_port.rules.registry import rule_named

FIGURES_FILE = "perf_figures.json"
# Rewrites for speed besides the fused ops (Rule.speeds_up): the run settings of launch scripts.
_DONE_RULES = ("launch-run-settings",)


@dataclass(frozen=True)
class Figure:
    effect: str
    figure: str
    source: str
    url: str


@dataclass(frozen=True)
class Done:
    """Rewrites of one rule that make the port faster."""

    rule: Rule
    count: int


@dataclass(frozen=True)
class Left:
    """The findings of one rule that leave speed on the table: how many, why (the first finding's message), and
    the expected effect of fixing them."""

    rule: Rule
    count: int
    why: str
    figure: Figure


@dataclass(frozen=True)
class Performance:
    done: list[Done]
    left: list[Left]

    def __bool__(self) -> bool:
        return bool(self.done or self.left)


@cache
def figures() -> dict[str, Figure]:
    """The figures by rule ID (an entry ``same_as`` another rule's shares its figure)."""
    raw = json.loads(resources.files("ascend_port.data").joinpath(FIGURES_FILE).read_text("utf-8"))["items"]
    resolved = {key: raw[value["same_as"]] if "same_as" in value else value for key, value in raw.items()}
    return {key: Figure(v["effect"], v["figure"], v["source"], v["url"]) for key, v in resolved.items()}


def performance(findings: Iterable[Finding]) -> Performance:
    """The section, from a run's findings (each rule's counted in ID order)."""
    done: dict[str, list[Finding]] = {}
    left: dict[str, list[Finding]] = {}
    known = figures()
    also_done = {rule_named(name).id for name in _DONE_RULES}
    for finding in findings:
        rule = finding.rule
        fused = rule.speeds_up or rule.id in also_done
        if fused and finding.applied and not finding.todo:
            done.setdefault(rule.id, []).append(finding)
        elif rule.id in known:
            left.setdefault(rule.id, []).append(finding)
    return Performance(
        [Done(found[0].rule, len(found)) for _, found in sorted(done.items())],
        [Left(found[0].rule, len(found), found[0].message, known[key]) for key, found in sorted(left.items())],
    )


def source_text(figure: Figure) -> str:
    """The source as one line: its name and its address, or that none is at hand."""
    if not figure.source:
        return "no published source at hand"
    return f"{figure.source} ({figure.url})" if figure.url else figure.source
