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

from ascend_port.core.options import PortOptions


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
# "npu.mstx:mstx" has range_push), "ops" (the ops the wheel registers in libtorch_npu.so, documented or not, and the
# documented ones), "optim", "profiler", "distributed" and "torch_npu" (torch_npu's own __all__). "signatures": the
# docs' prototype of each op; "schemas": the schema the wheel registers (what a call binds to).

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


def op_schema(op: str, version: str) -> str | None:
    """The schema a covered release's wheel registers for the op (what a call binds to: its keywords and
    defaults, which can differ from the docs' prototype), or None where the data has none."""
    index = _index(version)
    for schema, *runs in _releases_data().get("schemas", {}).get(op, []):
        if _present(runs, index):
            return str(schema)
    return None


def release_for_torch(torch_version: str) -> Release | None:
    """The covered release built for this torch version (``2.5.1``, ``2.5.1+cpu``), or None."""
    wanted = torch_version.split("+")[0]
    return next((r for r in reversed(_covered()) if r.torch_version == wanted), None)


def release_inventory(version: str) -> dict[str, Any]:
    """A covered release's names in torch_npu_api.json's shape (what ``ascend-port emulate --torch-npu`` gives its
    stand-in), with ``members``: the public members of classes, by ``<kind>:<Class>``. ValueError if not covered."""
    index = _index(version)
    kinds = _releases_data()["names"]
    return {
        "torch_npu_version": version,
        "torch_version": _covered()[index].torch_version,  # below 2.5, torch does not autoload torch_npu
        "npu": sorted(names("npu", version)),
        "npu_submodules": {
            sub: sorted(names(f"npu.{sub}", version)) for sub in sorted(names("npu_submodules", version))
        },
        "ops": sorted(names("ops", version)),
        "optim": sorted(names("optim", version)),
        "profiler": sorted(names("profiler", version)),
        "distributed": sorted(names("distributed", version)),
        "members": {kind: sorted(names(kind, version)) for kind in sorted(kinds) if ":" in kind},
        # per op: the registered schema (calls bind to it) and the docs' prototype (what the docs say it supports)
        "schemas": {op: schema for op in _releases_data().get("schemas", {}) if (schema := op_schema(op, version))},
        "signatures": {op: sig for op in _releases_data()["signatures"] if (sig := op_signature(op, version))},
    }


# --- the target release: what the port may emit (``--torch-npu VERSION``, ``[tool.ascend-port] torch-npu``) -------


def newest_release() -> str:
    """The newest covered release: the target when neither the command line, the configuration nor the project's
    own torch pin names one."""
    return _covered()[-1].version


def _numbers(version: str) -> tuple[int, ...]:
    m = re.match(r"\d+(?:\.\d+)*", version)
    return tuple(int(p) for p in m.group(0).split(".")) if m else ()


def covered_release(version: str) -> str:
    """The covered release a user's version names: itself (``2.5.1.post1``), or the covered release of the same
    torch version (``2.5.1``, ``2.5.1.*``, ``2.5.1.post0``: the API of one torch-npu line changes little between
    its post releases). ValueError, naming the covered releases, for anything else."""
    version = version.strip().removeprefix("v")
    versions = [r.version for r in _covered()]
    if version in versions:
        return version
    base = _numbers(version)[:3]
    # (``2.9`` names the newest release of the 2.9 line: 2.9.1)
    matches = [r for r in _covered() if base and _numbers(r.torch_version or "")[: len(base)] == base]
    exact = [r for r in matches if _numbers(r.torch_version or "") == base]
    if exact or (matches and len(base) < 3):
        return (exact or matches)[-1].version
    raise ValueError(f"torch_npu {version!r} is not a known release; covered: {', '.join(versions)}")


def nearest_release(torch_version: str) -> tuple[Release, bool]:
    """The covered release for a torch version and whether it is the exact pair: else the newest one built for an
    older torch (its API is what such a project can count on), else the oldest."""
    exact = release_for_torch(torch_version)
    if exact is not None:
        return exact, True
    wanted = _numbers(torch_version)
    older = [r for r in _covered() if r.torch_version and _numbers(r.torch_version) <= wanted]
    return (older[-1] if older else _covered()[0]), False


def target_version(options: PortOptions | None) -> str:
    """The covered release the port targets (PortOptions.target holds a covered version, checked when it was
    read)."""
    return (options.target if options is not None else None) or newest_release()


def target_api(options: PortOptions | None) -> NpuApi:
    """The API of the target release."""
    return load_release(target_version(options))


def target_torch(options: PortOptions | None) -> tuple[int, ...]:
    """The torch version the target release requires, as numbers (``(2, 1, 0)``); () when unknown."""
    version = target_version(options)
    release = next(r for r in _covered() if r.version == version)
    return _numbers(release.torch_version or "")


def _known(kind: str) -> dict[str, list[int]]:
    known: dict[str, list[int]] = _releases_data()["names"].get(kind, {})
    return known


def _judge(runs: list[int] | None, index: int, listing: bool, strict: bool) -> bool | None:
    """One name of one kind in release ``index``. A listing (an ``__all__``: torch.npu's names, ops, optim...) says
    what a module exports, not all it has (``torch.npu.default_generators`` is in none): a name it lacks is missing
    only when it came later than the release (or, ``strict``, whenever another release lists it). The members of a
    class are read from its definition: a member it lacks is missing."""
    if not runs:
        return False if not listing else None
    if _present(runs, index):
        return True
    return False if strict or not listing or index < runs[0] else None


def _npu_member(parts: list[str], index: int, strict: bool) -> bool | None:
    """``torch_npu.npu.<parts>``: True, False (missing), None (the data cannot tell)."""
    head = parts[0]
    runs = _known("npu").get(head) or _known("npu_submodules").get(head)
    found = _judge(runs, index, True, strict)
    if not found or len(parts) == 1 or parts[1].startswith("_"):
        return found
    # A submodule's names, or the members of a class of that name (torch.npu.mstx is the class mstx of npu/mstx.py)
    classes = [k for k in _releases_data()["names"] if k.startswith("npu") and k.endswith(f":{head}")]
    module = f"npu.{head}" if head in _known("npu_submodules") else None
    verdicts = [_judge(_known(kind).get(parts[1]), index, False, strict) for kind in classes]
    if module is not None:
        verdicts.append(_judge(_known(module).get(parts[1]), index, True, strict))
    # (a class's definition outweighs a listing that does not know the name)
    return True if True in verdicts else False if False in verdicts else None


def name_status(dotted: str, version: str, *, strict: bool = False) -> bool | None:
    """Does ``torch_npu.X...`` or ``torch.npu.X...`` exist in a covered release? True; False (missing); None (the
    data cannot tell: an undocumented op, a private name, a public name no ``__all__`` lists). Only the first names
    of the path are checked (not the methods of a result). ``strict``: what a rule may emit (a name the release does
    not list is missing); otherwise what a check of existing code may flag (see ``_judge``)."""
    parts = dotted.split(".")
    if parts[:2] == ["torch", "npu"]:
        parts = ["torch_npu", *parts[1:]]
    if parts[0] != "torch_npu" or len(parts) < 2 or parts[1].startswith("_"):
        return None
    index = _index(version)
    if parts[1] == "npu":
        return _npu_member(parts[2:], index, strict) if len(parts) > 2 and not parts[2].startswith("_") else True
    if parts[1] in ("optim", "profiler", "distributed") and len(parts) > 2:
        return _judge(_known(parts[1]).get(parts[2]), index, True, strict)
    if runs := _known("ops").get(parts[1]):
        # The ops are the documented ones: an op is often there before its docs (deepspeed calls npu_apply_adam_w,
        # documented from 2.7.1, since torch_npu 2.1), so only what a rule may emit is judged by them.
        verdict = _judge(runs, index, True, strict)
        return verdict if strict or verdict else None
    return _judge(_known("torch_npu").get(parts[1]), index, True, strict)


@cache
def flaggable_words(version: str) -> frozenset[str]:
    """The words one of which every name that ``name_status`` (not strict) finds missing from ``version`` spells:
    a name some release lists first after it, or a class whose members are read from its definition (any member
    but its own is missing). A module whose identifiers hold none of them has no missing name: the check skips
    reading it."""
    index = _index(version)
    words = set()
    for kind, known in _releases_data()["names"].items():
        if ":" in kind:
            words.add(kind.rsplit(":", 1)[1])
        words.update(name for name, runs in known.items() if runs and index < runs[0])
    return frozenset(words)


def availability(dotted: str) -> str:
    """Which covered releases have the name, as runs: ``in torch_npu 2.7.1.post11, 2.9.0.post9-2.14.0`` (names
    come and go: post releases of older lines come out after newer lines), or ``in no release ascend-port knows``."""
    covered = _covered()
    present = [bool(name_status(dotted, r.version, strict=True)) for r in covered]
    runs: list[str] = []
    start = None
    for i, here in enumerate([*present, False]):
        if here and start is None:
            start = i
        elif not here and start is not None:
            first, last = covered[start].version, covered[i - 1].version
            runs.append(first if first == last else f"{first}-{last}")
            start = None
    return f"in torch_npu {', '.join(runs)}" if runs else "in no release ascend-port knows"
