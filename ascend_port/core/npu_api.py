"""What torch_npu offers, read from package data extracted from its wheel by scripts/extract_torch_npu_api.py.

The tool never imports torch_npu (without Ascend's CANN libraries even ``import torch`` fails once it is
installed), so the public ``torch.npu`` surface ships as JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources


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
