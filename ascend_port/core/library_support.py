"""What third-party libraries accept on Ascend NPUs: ``ascend_port/data/library_support.json`` read once.

One row per library: the names it accepts on Ascend (device, accelerator, backend), the way forward where it has no
Ascend build, and the source each row was checked against. The NPU8xx rules (rules/frameworks.py), NPU504's import
TODOs (rules/libraries.py) and the dependency matrix (reports/packages.py) read the same rows, so a TODO and the
report never disagree.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

DATA_FILE = "library_support.json"


@dataclass(frozen=True)
class Library:
    name: str  # canonical distribution name
    imports: tuple[str, ...]  # top-level import names
    status: str  # compatible / replace / unsupported (reports/packages.py)
    replacement: str
    accepts: str  # what it accepts on Ascend
    way: str  # the way forward, written into TODOs
    source: str  # where the row was checked
    todo_imports: tuple[str, ...] = ()  # dotted import paths that get NPU504's TODO with ``way``
    also: tuple[str, ...] = ()  # other distribution names of the same library (pytorch-lightning, mmcv-full)


@cache
def _table() -> dict:
    """The data file, read and parsed once per process."""
    return json.loads(resources.files("ascend_port.data").joinpath(DATA_FILE).read_text("utf-8"))


@cache
def libraries() -> tuple[Library, ...]:
    raw = _table()
    return tuple(
        Library(
            name=row["name"],
            imports=tuple(row["imports"]),
            status=row["status"],
            replacement=row["replacement"],
            accepts=row["accepts"],
            way=row["way"],
            source=row["source"],
            todo_imports=tuple(row.get("todo_imports", ())),
            also=tuple(row.get("also", ())),
        )
        for row in raw["libraries"]
    )


def library(name: str) -> Library:
    """The row of distribution ``name`` (KeyError when the table has none)."""
    for row in libraries():
        if row.name == name:
            return row
    raise KeyError(name)


def import_ways() -> tuple[tuple[str, str], ...]:
    """(dotted import prefix, way forward) for the libraries whose import alone deserves a TODO (NPU504)."""
    return tuple((prefix, row.way) for row in libraries() for prefix in row.todo_imports)


def flash_attention_npu_since() -> tuple[int, ...]:
    """The first transformers release whose attn_implementation="flash_attention_2" runs on NPUs."""
    row = next(r for r in _table()["libraries"] if r["name"] == "transformers")
    return tuple(int(p) for p in row["flash_attention_npu_since"].split("."))


# --- Lightning --------------------------------------------------------------------------------------------------------

LIGHTNING_PACKAGES = ("lightning", "pytorch_lightning", "lightning_fabric")
# The entry points whose `accelerator=` is a Lightning accelerator name ("npu" is not one: it is rejected).
LIGHTNING_ENTRIES = ("Trainer", "Fabric")


def is_lightning_entry(qualified: str | None) -> bool:
    """Is ``qualified`` (a call's resolved name) Lightning's Trainer or Fabric, under any of its packages?"""
    if not qualified:
        return False
    package, _, rest = qualified.partition(".")
    return package in LIGHTNING_PACKAGES and qualified.rsplit(".", 1)[-1] in LIGHTNING_ENTRIES and bool(rest)


def imports_lightning(aliases: dict[str, str]) -> bool:
    """Does a module whose import aliases are ``aliases`` (local name -> dotted path) import Lightning?"""
    return any(path.split(".")[0] in LIGHTNING_PACKAGES for path in aliases.values())


# What names a device in a module that imports Lightning: everything the device rules take as a device name except
# `accelerator`, which there is Lightning's accelerator name, and "npu" is not one (NPU800 says what to do instead).
DEVICE_NAME_IN_LIGHTNING = re.compile(r"(?i)device|^dev$")
DEVICE_OPERAND_IN_LIGHTNING = re.compile(r"(?i)device|\bdev(?:_|\b)|_dev\b|\.type\b")


# --- the project's transformers (NPU803) ---------------------------------------------------------------------------


@lru_cache(maxsize=8)
def _requirement(package: str) -> re.Pattern[str]:
    """``package`` required with a lower bound (`torch>=2.2`, `"transformers[torch]==4.56"`): not another package
    whose name holds it (`torchvision`, `pytorch-lightning`, `torch-npu`)."""
    return re.compile(
        rf"""(?:^|["'\s,\[]){re.escape(package)}\s*(?:\[[^\]]*\])?\s*(?:==|>=|~=|===)\s*v?(\d+(?:\.\d+)*)""",
        re.MULTILINE,
    )


def lowest_pin(texts: list[str], package: str) -> str | None:
    """The lowest release of ``package`` that ``texts`` (requirements files, pyproject.toml, setup.py) allow: the
    smallest `==`/`>=`/`~=` bound they give, or None when none names one (unpinned: the port does not guess)."""
    found = [m.group(1) for text in texts for m in _requirement(package).finditer(text)]
    return min(found, key=version_tuple) if found else None


def transformers_pin(texts: list[str]) -> str | None:
    return lowest_pin(texts, "transformers")


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def at_least(version: str, since: tuple[int, ...]) -> bool:
    """Is ``version`` ("4.56", "4.56.1") ``since`` or later? Missing parts count as 0, so a requirement written
    `transformers>=4.56` is 4.56.0 (a plain tuple comparison puts (4, 56) below (4, 56, 0))."""
    have = version_tuple(version)
    width = max(len(have), len(since))
    return have + (0,) * (width - len(have)) >= tuple(since) + (0,) * (width - len(since))
