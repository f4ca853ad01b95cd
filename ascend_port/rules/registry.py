"""Every rule: the rule modules of this package declare theirs when imported, and this module imports them all.

A run answered from the result cache never needs the rule modules (LibCST and every transform): the catalogue an
earlier run of this very code recorded stands in for them (``use_snapshot``).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import ascend_port.rules
from ascend_port.core.catalogue import Confidence, Rule, declared
from ascend_port.core.porting import ProjectStep

# The rule modules that declare project steps (their PROJECT_STEPS), in the order the engine runs them. Named here,
# not found by importing every rule module: a run answered from the cache imports none of them (see use_snapshot),
# and these are light (no LibCST). tests/test_layout.py checks that every module with steps is listed.
STEP_MODULES = (
    "ascend_port.rules.cuda_sources",
    "ascend_port.rules.library_packages",
    "ascend_port.rules.island_routes",
    "ascend_port.rules.attention.shared",
    "ascend_port.rules.project.requirements",
    "ascend_port.rules.project.pyproject",
    "ascend_port.rules.project.launch_flags",
    "ascend_port.rules.perf.run_settings",
    "ascend_port.rules.loss_scaling",
)

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


def project_steps() -> list[ProjectStep]:
    """The declared project steps (core/porting.ProjectStep), in the order they run."""
    return [step for name in STEP_MODULES for step in importlib.import_module(name).PROJECT_STEPS]


def rule_named(name: str) -> Rule:
    """The rule called ``name`` (``triton-kernel``): how the layers above the rules name one without spelling its
    ID."""
    found = [r for r in _catalogue().values() if r.name == name]
    if len(found) != 1:
        raise KeyError(f"no rule named {name!r}")
    return found[0]


def written_definitions() -> dict[str, tuple[str, ...]]:
    """The module-level functions the rules write into ported files, each with those it calls (the project steps'
    ``definitions``, and each rule's ``writes``: functions written whole, in one block)."""
    written = {name: () for r in all_rules() for name in r.writes}
    return {**written, **{name: needs for step in project_steps() for name, needs in step.definitions.items()}}


def is_kernel_todo(rule_id: str, message: str) -> bool:
    """Is this finding a Triton kernel to bring up, a work item of its own in the reports (not a note on one of a
    kernel's lines)?"""
    # (LibCST: only when a report asks)
    from ascend_port.rules.kernels.kernel_todos import is_kernel_todo as kernel_todo

    return kernel_todo(rule_id, message)


def _catalogue() -> dict[str, Rule]:
    if _SNAPSHOT is not None and not _modules_loaded:
        return _SNAPSHOT
    _load_rule_modules()
    return declared()


def _load_rule_modules() -> None:
    global _modules_loaded
    if _modules_loaded:
        return
    # Importing a rule module declares its rules.
    for module in pkgutil.walk_packages(ascend_port.rules.__path__, "ascend_port.rules."):
        if module.name != __name__:
            importlib.import_module(module.name)

    _modules_loaded = True


def snapshot_rules() -> list[dict[str, object]]:
    """Every rule as plain data, for ``use_snapshot`` in a later process."""
    return [
        {**dataclasses.asdict(r), "confidence": r.confidence.label, **{key: list(getattr(r, key)) for key in _TUPLES}}
        for r in all_rules()
    ]


# Each field of Rule and the type its snapshot value must have (the confidence is stored by its label).
_SNAPSHOT_TYPES = {
    f.name: bool if f.type == "bool" else list if f.type.startswith("tuple") else str for f in dataclasses.fields(Rule)
}


_TUPLES = tuple(name for name, kind in _SNAPSHOT_TYPES.items() if kind is list)  # (stored as lists)


def use_snapshot(data: object) -> bool:
    """Answer ``all_rules``/``get_rule`` from ``snapshot_rules()`` output instead of importing the rule modules.
    The caller vouches that it was made by this same code (the result cache keys it by the tool's fingerprint);
    data that does not check out is refused (False) and the modules are imported as usual."""
    global _SNAPSHOT
    if not isinstance(data, list):
        return False
    try:
        rules = {}
        for item in data:
            if (
                not all(type(item[name]) is kind for name, kind in _SNAPSHOT_TYPES.items())
                or len(item) != len(_SNAPSHOT_TYPES)
                or item["id"] in rules
                or not all(type(value) is str for key in _TUPLES for value in item[key])
            ):
                return False
            tuples = {key: tuple(item[key]) for key in _TUPLES}
            rules[item["id"]] = Rule(**{**item, "confidence": Confidence.parse(item["confidence"]), **tuples})
    except (TypeError, KeyError, ValueError):
        return False
    if not rules:
        return False
    _SNAPSHOT = rules
    return True


def markdown_table() -> str:
    """README's table of every rule (``scripts/update_readme.py`` writes it; a test checks that it is current)."""
    rows = ["| rule | name | confidence | summary | code |", "|---|---|---|---|---|"]
    for r in all_rules():
        if not r.retired:
            summary = r.summary.replace("|", "\\|")
            rows.append(f"| {r.id} | {r.name} | {r.confidence.label} | {summary} | `{r.path}` |")
    return "\n".join(rows) + "\n"
