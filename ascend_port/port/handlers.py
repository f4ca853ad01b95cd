"""The port of one file, per file type: ``handler_for`` picks the handler by file name; files no handler claims
are not looked at. A handler ports the bytes of one file (``ascend_port.core.porting.Handler``)."""

from __future__ import annotations

from pathlib import Path

from ascend_port.core.options import PortOptions
from ascend_port.core.porting import Handler, Ported
from ascend_port.core.selection import Selection
from ascend_port.rules.cuda_sources import CudaSourceHandler


class PythonHandler:
    def port(self, data: bytes, selection: Selection, options: PortOptions) -> Ported:
        from ascend_port.core.sources import decode_python
        from ascend_port.port.python import port_source

        source = decode_python(data)
        outcome = port_source(source.text, selection, options)
        return Ported(source, outcome.new_text, outcome.findings)


_PYTHON = PythonHandler()
_CUDA_SOURCES = CudaSourceHandler()


def handler_for(path: Path) -> Handler | None:
    if path.suffix in (".cu", ".cuh"):
        return _CUDA_SOURCES  # report only: the kernels are counted, the file is never changed
    from ascend_port.port.filetypes import file_kind, handler

    kind = file_kind(path)  # project files: requirements, pyproject.toml, setup.py, scripts, configs, notebooks
    if kind is not None:
        return handler(kind)
    if path.suffix == ".py":
        return _PYTHON
    return None
