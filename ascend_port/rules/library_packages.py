"""The project step of NPU504 (rules/libraries.py): which CUDA-only libraries of its table the project itself is.
Light (no LibCST), as every module with project steps is: rules/registry.py imports it on runs the cache answers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ascend_port.core import library_support
from ascend_port.core.options import PortOptions
from ascend_port.core.porting import Project, ProjectStep

# The top-level packages of the libraries whose imports get the way forward of data/library_support.json.
TODO_IMPORT_PACKAGES = tuple(sorted({prefix.split(".")[0] for prefix, _ in library_support.import_ways()}))


class OwnPackages(ProjectStep):
    """The packages of NPU504's table that the project is (PortOptions.own_packages; what the caller set wins):
    Liger-Kernel's modules import liger_kernel, and are no user of the library to be told to drop it."""

    def facts(self, project: Project, options: PortOptions) -> PortOptions:
        if options.own_packages:
            return options
        own = {folder.name for path in project.files for folder in _named_folders(path) if _top_level(folder)}
        return replace(options, own_packages=tuple(sorted(own))) if own else options


def _named_folders(path: Path) -> list[Path]:
    """The folders above ``path`` named as a package of the table (``.../liger_kernel/ops/rms_norm.py``)."""
    return [folder for folder in path.parents if folder.name in TODO_IMPORT_PACKAGES]


def _top_level(folder: Path) -> bool:
    """Is ``folder`` a top-level package (an ``__init__.py``, none in its parent)?"""
    return (folder / "__init__.py").is_file() and not (folder.parent / "__init__.py").is_file()


PROJECT_STEPS = (OwnPackages(),)
