"""Ascend's version numbers and the tables that pair them (package data ``ascend_versions.json``, each table with
its source): torch-npu release -> CANN, CANN release -> the driver and firmware its install guide pairs with it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

VERSIONS_FILE = "ascend_versions.json"


def version_key(version: str) -> tuple[tuple[int, int], ...]:
    """An order for CANN and driver versions: ``8.0.RC3`` < ``8.0.0`` < ``8.0.1``, ``24.1.rc2`` < ``24.1.0``,
    ``25.0.rc1.1`` > ``25.0.rc1``; an alpha or beta before its release candidate."""
    parts: list[tuple[int, int]] = []
    for token in version.strip().lower().replace("-", ".").split("."):
        m = re.fullmatch(r"(rc|alpha|beta|t)?(\d*)\w*", token)
        if m is None or not (m.group(1) or m.group(2)):
            continue
        stage = {"alpha": -3, "beta": -2, "t": -2, "rc": -1, None: 0}[m.group(1)]
        parts.append((stage, int(m.group(2) or 0)))
    return tuple(parts)


def same_release(a: str, b: str) -> bool:
    return version_key(a) == version_key(b)


@cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resources.files("ascend_port.data").joinpath(VERSIONS_FILE).read_text("utf-8"))
    return data


@dataclass(frozen=True)
class Pairing:
    torch_npu: str
    torch: str
    cann: str


def torch_npu_pairings() -> list[Pairing]:
    """Each torch-npu release of the compatibility table with its torch and the CANN it was released with."""
    return [Pairing(*row) for row in _data()["torch_npu_cann"]["rows"]]


def cann_for_torch_npu(version: str) -> str | None:
    """The CANN release the table pairs with this torch-npu release (None: not in the table)."""
    wanted = version.split("+")[0]
    return next((p.cann for p in torch_npu_pairings() if p.torch_npu == wanted), None)


def torch_npu_for(torch: str, cann: str) -> str | None:
    """The torch-npu release the table pairs with this torch and this CANN (None: no such row)."""
    base = torch.split("+")[0]
    return next((p.torch_npu for p in torch_npu_pairings() if p.torch == base and same_release(p.cann, cann)), None)


@dataclass(frozen=True)
class HostSoftware:
    """The driver and firmware the install guide puts beside a CANN release, for one chip family."""

    cann: str
    chip: str
    driver: str
    firmware: str


def driver_for(cann: str, chip: str) -> HostSoftware | None:
    """The driver and firmware paired with this CANN release on this chip family ("910b", "310p"); None: unknown."""
    rows = [HostSoftware(*row) for row in _data()["cann_driver"]["rows"]]
    return next((r for r in rows if r.chip == chip and same_release(r.cann, cann)), None)


def table_source(table: str) -> str:
    return str(_data()[table]["source"])
