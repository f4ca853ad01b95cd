"""Composition of the transforms into the port of one file, per file type.

A handler ports the bytes of one file: ``port(data, selection, options) -> Ported``. ``handler_for`` picks it
by file name; files no handler claims are not looked at.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Protocol

from ascend_port.findings import Finding
from ascend_port.rules import Selection
from ascend_port.sources import Source


class PortError(Exception):
    """The file cannot be ported; the message says why, and the file is left untouched."""


@dataclass
class Ported:
    source: Source
    new_text: str | None
    findings: list[Finding] = field(default_factory=list)


class Handler(Protocol):
    def port(self, data: bytes, selection: Selection, options: Mapping[str, str]) -> Ported: ...


class PythonHandler:
    def port(self, data: bytes, selection: Selection, options: Mapping[str, str]) -> Ported:
        from ascend_port.codemods.python import port_source
        from ascend_port.sources import decode_python

        source = decode_python(data)
        outcome = port_source(source.text, selection, options)
        return Ported(source, outcome.new_text, outcome.findings)


_PYTHON = PythonHandler()


def handler_for(path: Path) -> Handler | None:
    if path.suffix in (".cu", ".cuh"):
        return _CUDA_SOURCES  # report only: the kernels are counted, the file is never changed
    from ascend_port.codemods.filetypes import file_kind, handler

    kind = file_kind(path)  # project files: requirements, pyproject.toml, setup.py, scripts, configs, notebooks
    if kind is not None:
        return handler(kind)
    if path.suffix == ".py":
        return _PYTHON
    return None


from ascend_port.codemods import project_rules  # noqa: E402,F401  (registers the NPU6xx rules)
from ascend_port.codemods.cuda_sources import CudaSourceHandler  # noqa: E402  (registers NPU503)

_CUDA_SOURCES = CudaSourceHandler()
