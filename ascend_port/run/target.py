"""The torch-npu release a port targets, when neither ``--torch-npu`` nor ``[tool.ascend-port] torch-npu`` names
it: the release built for the project's own torch pin (``torch==2.1.0`` in requirements.txt, pyproject.toml's
dependencies, setup.py's or setup.cfg's install_requires), or the nearest covered pair below it. The rules emit only
what the target has (core/npu_api.py), so a project pinned to an old torch gets code that runs under its own pins.
run/project_facts.py finds the pin files (once per run) and asks ``torch_target`` about each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ascend_port.core import npu_api
from ascend_port.formats.requirement import parse_requirement

# A quoted requirement string in setup.py, or one item of setup.cfg's install_requires.
_TORCH_STRING = re.compile(r"""["'](torch\s*(?:\[[^\]]*\])?\s*===?\s*[\w.*+!]+)[^"']*["']""")
_TORCH_LINE = re.compile(r"^\s*(torch\s*(?:\[[^\]]*\])?\s*===?\s*[\w.*+!]+)", re.MULTILINE)


@dataclass(frozen=True)
class Inferred:
    version: str  # the covered torch-npu release
    where: str  # the file and pin it came from: "requirements.txt (torch==2.1.0)"
    exact: bool  # False: torch-npu has no release for that torch, the nearest older pair was taken


def _pinned_version(requirement: str) -> str | None:
    """``2.1.0`` from ``torch==2.1.0`` (``+cu121`` and a ``.*`` suffix dropped); None for other requirements."""
    req = parse_requirement(requirement)
    if req is None or req.key != "torch":
        return None
    m = re.fullmatch(r"===?\s*v?(\d+(?:\.\d+)*)(?:\.\*)?(?:\+[\w.]+)?", req.specifier.replace(" ", ""))
    return m.group(1) if m else None


def _requirements(path: Path) -> list[str]:
    """The requirement strings of a pin file that may name torch (a cheap read: no full parse)."""
    try:
        text = path.read_text("utf-8", errors="replace")
    except OSError:
        return []
    if "torch" not in text:
        return []
    if path.name in ("pyproject.toml", "setup.py"):
        return [m.group(1) for m in _TORCH_STRING.finditer(text)]
    return [m.group(1) for m in _TORCH_LINE.finditer(text)]


def torch_target(path: Path, here: Path) -> Inferred | None:
    """The target for the first torch==X pin of pin file ``path`` (shown relative to ``here``), or None."""
    for requirement in _requirements(path):
        version = _pinned_version(requirement)
        if version is None:
            continue
        release, exact = npu_api.nearest_release(version)
        shown = path.relative_to(here).as_posix() if path.is_relative_to(here) else str(path)
        note = (
            "" if exact else f"; torch-npu has no release for it: the nearest older pair, torch {release.torch_version}"
        )
        return Inferred(release.version, f"{shown} (torch=={version}{note})", exact)
    return None
