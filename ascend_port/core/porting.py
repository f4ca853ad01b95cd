"""The contract of a file-type handler: ``port(data, selection, options) -> Ported``, or ``PortError``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ascend_port.core.findings import Finding
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.core.sources import Source


class PortError(Exception):
    """The file cannot be ported; the message says why, and the file is left untouched."""


@dataclass
class Ported:
    source: Source
    new_text: str | None
    findings: list[Finding] = field(default_factory=list)


class Handler(Protocol):
    def port(self, data: bytes, selection: Selection, options: PortOptions) -> Ported: ...
