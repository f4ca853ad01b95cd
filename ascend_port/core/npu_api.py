"""What torch_npu offers, read from package data extracted from its wheel by scripts/extract_torch_npu_api.py.

The tool never imports torch_npu (without Ascend's CANN libraries even ``import torch`` fails once it is
installed), so the public ``torch.npu`` surface ships as JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class NpuApi:
    version: str
    npu: frozenset[str]
    submodules: dict[str, frozenset[str]]
    ops: frozenset[str]
    optim: frozenset[str]
    profiler: frozenset[str]

    def has(self, name: str) -> bool:
        """Is ``torch.npu.<name>`` an attribute (a public name or a public submodule)?"""
        return name in self.npu or name in self.submodules

    def has_path(self, dotted: str) -> bool:
        """Is ``torch.npu.<dotted>`` importable, e.g. ``amp`` or ``amp.GradScaler``?"""
        head, _, rest = dotted.partition(".")
        if not rest:
            return self.has(head)
        return head in self.submodules and rest in self.submodules[head]


@cache
def load() -> NpuApi:
    raw = json.loads(resources.files("ascend_port.data").joinpath("torch_npu_api.json").read_text("utf-8"))
    return NpuApi(
        version=raw["torch_npu_version"],
        npu=frozenset(raw["npu"]),
        submodules={k: frozenset(v) for k, v in raw["npu_submodules"].items()},
        ops=frozenset(raw["ops"]),
        optim=frozenset(raw["optim"]),
        profiler=frozenset(raw["profiler"]),
    )


# --- every torch_npu release: ascend_port/data/torch_npu_releases.json (scripts/extract_torch_npu_api.py --releases)
#
# The file covers one wheel per torch version (the newest torch-npu release built for it, post releases included) in
# release order; a name maps to the runs of release indexes that have it ([first, last, first, last, ...]: post
# releases of older branches come out after newer branches, so a name can go away and come back). Kinds: "npu"
# (torch.npu), "npu_submodules", "npu.<submodule>", "npu.<submodule>:<Class>" (the public members of a class, e.g.
# "npu.mstx:mstx" has range_push), "ops" (documented torch_npu ops), "optim", "profiler", "distributed" and
# "torch_npu" (torch_npu's own __all__).

RELEASES_FILE = "torch_npu_releases.json"


@dataclass(frozen=True)
class Release:
    """A torch-npu release and the torch it requires, as its wheels' METADATA writes it.

    ``torch`` is the specifier of the manylinux x86_64 wheel (``==2.5.1+cpu``, ``==2.14.0.*``; None where the wheel
    declares no torch); aarch64 wheels often require the torch without ``+cpu``. ``python``: the cp tags of the wheels.
    """

    version: str
    torch: str | None
    python: tuple[str, ...]
    torch_aarch64: str | None
    python_aarch64: tuple[str, ...]

    @property
    def torch_version(self) -> str | None:
        """The torch version required, without operator, ``.*`` or local label: ``==2.1.0+cpu`` -> ``2.1.0``."""
        if not self.torch:
            return None
        return self.torch.split(";")[0].lstrip("=~<>! ").removesuffix(".*").split("+")[0]


@cache
def _releases_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resources.files("ascend_port.data").joinpath(RELEASES_FILE).read_text("utf-8"))
    return data


def _release(entry: dict[str, Any]) -> Release:
    python = tuple(entry.get("python", ()))
    return Release(
        version=entry["version"],
        torch=entry.get("torch"),
        python=python,
        torch_aarch64=entry.get("torch_aarch64", entry.get("torch")),
        python_aarch64=tuple(entry.get("python_aarch64", python)),
    )


@cache
def _covered() -> tuple[Release, ...]:
    published = {entry["version"]: entry for entry in _releases_data()["published"]}
    return tuple(_release(published.get(entry["version"], entry)) for entry in _releases_data()["releases"])


def releases() -> list[Release]:
    """The releases whose API the package data covers, oldest first (one per torch version)."""
    return list(_covered())


@cache
def _published() -> tuple[Release, ...]:
    return tuple(_release(entry) for entry in _releases_data()["published"])


def published_releases() -> list[Release]:
    """Every torch-npu version on PyPI when the data was extracted (pre and post releases included), oldest first."""
    return list(_published())


def _index(version: str) -> int:
    versions = [r.version for r in _covered()]
    if version in versions:
        return versions.index(version)
    hint = ""
    if (base := re.match(r"\d+(?:\.\d+)*", version)) and (release := release_for_torch(base.group(0))):
        hint = f" ({release.version} is the covered release for torch {release.torch_version})"
    raise ValueError(f"torch_npu {version!r} is not a covered release{hint}; covered: {', '.join(versions)}")


def _present(runs: list[int], index: int) -> bool:
    return any(first <= index <= last for first, last in zip(runs[::2], runs[1::2]))


def names(kind: str, version: str) -> frozenset[str]:
    """The public names of one kind (see above) in a covered release; empty for a kind it does not have."""
    index = _index(version)
    return frozenset(name for name, runs in _releases_data()["names"].get(kind, {}).items() if _present(runs, index))


@cache
def load_release(version: str) -> NpuApi:
    """The torch_npu API of a covered release, in load()'s shape; ValueError for a version not covered."""
    _index(version)
    return NpuApi(
        version=version,
        npu=names("npu", version),
        submodules={sub: names(f"npu.{sub}", version) for sub in sorted(names("npu_submodules", version))},
        ops=names("ops", version),
        optim=names("optim", version),
        profiler=names("profiler", version),
    )


def first_release(name: str, kind: str = "npu") -> str | None:
    """The oldest covered release that has the name (it may be missing from a later one: see ``names``)."""
    runs = _releases_data()["names"].get(kind, {}).get(name)
    return _covered()[runs[0]].version if runs else None


def op_signature(op: str, version: str) -> str | None:
    """The prototype the op docs of a covered release give (``npu_rms_norm(Tensor self, ...) -> (Tensor, Tensor)``)."""
    index = _index(version)
    for signature, *runs in _releases_data()["signatures"].get(op, []):
        if _present(runs, index):
            return str(signature)
    return None


def release_for_torch(torch_version: str) -> Release | None:
    """The covered release built for this torch version (``2.5.1``, ``2.5.1+cpu``), or None."""
    wanted = torch_version.split("+")[0]
    return next((r for r in reversed(_covered()) if r.torch_version == wanted), None)


def release_inventory(version: str) -> dict[str, Any]:
    """A covered release's names in torch_npu_api.json's shape (what ``ascend-port emulate --torch-npu`` gives its
    stand-in), with ``members``: the public members of classes, by ``<kind>:<Class>``. ValueError if not covered."""
    _index(version)
    kinds = _releases_data()["names"]
    return {
        "torch_npu_version": version,
        "npu": sorted(names("npu", version)),
        "npu_submodules": {
            sub: sorted(names(f"npu.{sub}", version)) for sub in sorted(names("npu_submodules", version))
        },
        "ops": sorted(names("ops", version)),
        "optim": sorted(names("optim", version)),
        "profiler": sorted(names("profiler", version)),
        "distributed": sorted(names("distributed", version)),
        "members": {kind: sorted(names(kind, version)) for kind in sorted(kinds) if ":" in kind},
    }
