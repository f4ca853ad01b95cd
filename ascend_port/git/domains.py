"""The port of one file cut into one step per rule domain (device, distributed, precision, ...), so that the git
workflow can commit it domain by domain and a reviewer can read the port commit by commit.

Step k is the port of the ORIGINAL file with the rules of the first k domains only (``DomainSelection``): each
step is a real port, so it parses, and the difference between two steps is exactly what one domain's rules do
on top of the ones before (``import torch_npu``, rule NPU100, comes with the first domain that needs it). After an
interactive review the accepted hunks are grouped by the domains of the findings behind them instead.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ascend_port.core.catalogue import DOMAIN_TABLE, DOMAINS, Rule
from ascend_port.core.findings import Finding
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.git.review import breaks
from ascend_port.port.handlers import handler_for
from ascend_port.run.hunks import LineEdit, apply_edits, split_lines

ORDER = tuple(DOMAINS)  # "NPU1" ... "NPU9"
TITLES = {d.prefix: d.title for d in DOMAIN_TABLE}


@dataclass(frozen=True)
class DomainSelection(Selection):
    """The rules ``base`` enables, restricted to the domains whose ID prefixes are in ``prefixes``."""

    base: Selection = field(default_factory=Selection)
    prefixes: tuple[str, ...] = ()

    def enabled(self, rule: Rule) -> bool:
        return rule.id[:4] in self.prefixes and self.base.enabled(rule)


@dataclass
class Step:
    prefix: str  # the domain, e.g. "NPU1"
    data: bytes  # the whole file after this domain and the ones before it
    counts: Counter[str]  # rule ID -> findings this step adds
    rules: dict[str, Rule] = field(default_factory=dict)


@dataclass
class FilePlan:
    """What the git workflow writes for one file: its path in the repository, old and final bytes, and steps."""

    path: str  # relative to the repository root, with "/"
    target: Path  # absolute
    old: bytes
    new: bytes
    findings: list[Finding]
    steps: list[Step] = field(default_factory=list)


def _step(prefix: str, data: bytes, findings: list[Finding]) -> Step:
    return Step(prefix, data, Counter(f.rule.id for f in findings), {f.rule.id: f.rule for f in findings})


def port_steps(plan: FilePlan, selection: Selection, options: PortOptions) -> list[Step]:
    """One step per domain that changes the file, from cumulative ports of the original bytes."""
    applied = [f for f in plan.findings if f.applied]
    prefixes = sorted({f.rule.id[:4] for f in applied}, key=ORDER.index) or ["NPU1"]
    handler = handler_for(plan.target)
    if handler is None:  # (a planned file always has one: it was ported)
        return [_step(prefixes[-1], plan.new, applied)] if plan.new != plan.old else []
    steps: list[Step] = []
    before: Counter[str] = Counter()
    previous = plan.old
    for k, prefix in enumerate(prefixes):
        if k == len(prefixes) - 1:
            data, findings = plan.new, applied
        else:
            try:
                outcome = handler.port(
                    plan.old, DomainSelection(base=selection, prefixes=tuple(prefixes[: k + 1])), options
                )
            except Exception:
                continue
            data = outcome.source.encode(outcome.new_text) if outcome.new_text is not None else plan.old
            findings = [f for f in outcome.findings if f.applied]
        if data == previous:
            continue
        step = _step(prefix, data, findings)
        step.counts, before = step.counts - before, step.counts
        steps.append(step)
        previous = data
    return steps


def unit_steps(plan: FilePlan, units: list[tuple[LineEdit, list[Finding]]]) -> list[Step]:
    """Steps for a reviewed file: each accepted edit goes with the latest domain among its findings. A step that
    would not parse on its own is merged into the next one; the last step is the accepted result."""
    found = [max((ORDER.index(f.rule.id[:4]) for f in findings), default=None) for _, findings in units]
    last = max((level for level in found if level is not None), default=0)
    levels = [last if level is None else level for level in found]
    old_lines = split_lines(plan.old)
    steps: list[Step] = []
    done: set[int] = set()
    for level in sorted(set(levels)):
        included = [i for i, lvl in enumerate(levels) if lvl <= level]
        data = plan.new if level == last else apply_edits(old_lines, [units[i][0] for i in included])
        if level != last and breaks(plan.path, plan.old, data):
            continue
        steps.append(_step(ORDER[level], data, [f for i in included if i not in done for f in units[i][1]]))
        done.update(included)
    return steps
