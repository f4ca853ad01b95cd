"""What a run needs to know about the project as a whole, read once: the files that pin its requirements, its torch
pin (the target torch-npu release, run/target.py), the lowest transformers release it allows (NPU803) and the ops
its C++/CUDA extensions bind for Python (NPU502's call sites in other files).

Every file is ported on its own, so these facts reach the rules as port options (``ProjectFacts.options``), which
are part of every file's cache key: a changed pin or a new extension op ports the files afresh.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from ascend_port.core import library_support
from ascend_port.core.options import PortOptions
from ascend_port.core.options import extension_ops as extension_ops_option
from ascend_port.rules.cuda_sources import EXTENSION_NAME_MACRO, bindings
from ascend_port.run.discovery import SKIPPED_DIRS
from ascend_port.run.target import Inferred, torch_target

# Where a project pins its requirements, looked for in the folder given (or the folder of the file given) and its
# parents up to the top of its project.
PIN_FILES = ("requirements*.txt", "requirements/*.txt", "pyproject.toml", "setup.py", "setup.cfg")
PROJECT_TOPS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
# The run's own files that can pin requirements (port/filetypes.py kinds), wherever they are below the paths given.
REQUIREMENT_KINDS = ("requirements", "pyproject", "setup.py", "setup.cfg")
CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".cu", ".cuh")
MAX_CPP_FILES = 5000  # (a bound on what a huge tree costs; extension bindings sit near the top of a project)


def _pin_chain(folder: Path) -> tuple[tuple[Path, tuple[Path, ...]], ...]:
    """(folder, its pin files) from ``folder`` up to the top of its project (what is above it is another one):
    listed once for a run (the configuration and the engine both ask), again when a folder's listing changed."""
    return _listed_chain(folder, _listing_signature(folder))


def _listing_signature(folder: Path) -> tuple[int, ...]:
    stamps = []
    for here in (folder, *folder.parents):
        for listed in (here, here / "requirements"):
            try:
                stamps.append(listed.stat().st_mtime_ns)
            except OSError:
                stamps.append(0)
    return tuple(stamps)


@lru_cache(maxsize=64)
def _listed_chain(folder: Path, signature: tuple[int, ...]) -> tuple[tuple[Path, tuple[Path, ...]], ...]:
    chain = []
    for here in (folder, *folder.parents):
        found: list[Path] = []
        for pattern in PIN_FILES:
            found += sorted(p for p in here.glob(pattern) if p.is_file())
        chain.append((here, tuple(found)))
        if any((here / top).exists() for top in PROJECT_TOPS):
            break
    return tuple(chain)


@dataclass(frozen=True)
class ProjectFacts:
    folder: Path  # the folder given (or the folder of the file given), resolved
    files: tuple[Path, ...] = ()  # the files the run discovered (more requirement files below ``folder``)

    @cached_property
    def pin_files(self) -> tuple[Path, ...]:
        """The files that may pin requirements: those of the folder chain, then the run's own, each once."""
        from ascend_port.port.filetypes import file_kind

        chain = [p for _, paths in _pin_chain(self.folder) for p in paths]
        seen = {p.resolve() for p in chain}
        own = [p for p in self.files if file_kind(p) in REQUIREMENT_KINDS and p.resolve() not in seen]
        return (*chain, *own)

    @property
    def top(self) -> Path:
        """The top of the project: the folder of its repository, pyproject.toml or setup.py (else ``folder``)."""
        chain = _pin_chain(self.folder)
        last = chain[-1][0]
        return last if any((last / t).exists() for t in PROJECT_TOPS) else self.folder

    @cached_property
    def torch_pin(self) -> Inferred | None:
        """The target torch-npu release for the nearest torch==X pin of the folder chain, or None."""
        for here, paths in _pin_chain(self.folder):
            for path in paths:
                if (found := torch_target(path, here)) is not None:
                    return found
        return None

    @cached_property
    def transformers_pin(self) -> str | None:
        """The lowest transformers release the run's requirement files (and those at or below ``folder``) allow
        (NPU803), or None. Not those above ``folder``: a tree unpacked inside another project (a wheel in a cache)
        would take that project's pins, and unlike the torch pin's target, no flag overrides this one."""
        texts = []
        for path in self.pin_files:
            resolved = path.resolve()
            # (the run's files of that name: resolving them all cost more than the rest of the run's start)
            if not resolved.is_relative_to(self.folder) and all(
                p.resolve() != resolved for p in self.files if p.name == path.name
            ):
                continue
            try:
                texts.append(path.read_text("utf-8", errors="replace"))
            except OSError:
                continue
        return library_support.transformers_pin(texts)

    @cached_property
    def extension_ops(self) -> dict[str, dict[str, str]]:
        """Extension module (``pkg._C``; ``torch.ops.<ns>`` for a TORCH_LIBRARY namespace) -> op -> the C++ files,
        relative to the top, that bind it; a CUDAExtension of setup.py whose sources bind nothing readable maps to
        no ops (its module is still known)."""
        return extension_ops(self.top)

    def options(self, options: PortOptions) -> PortOptions:
        """``options`` with these facts, which carry them to every file; what the caller set wins."""
        facts: dict[str, Any] = {}
        if options.transformers_pin is None and (pin := self.transformers_pin):
            facts["transformers_pin"] = pin
        if not options.extension_ops and (ops := self.extension_ops):
            facts["extension_ops"] = extension_ops_option(ops)
        return replace(options, **facts) if facts else options


def facts(paths: Iterable[Path], files: Iterable[Path] = ()) -> ProjectFacts:
    """The facts of the project around the first of ``paths`` (the working directory without any)."""
    first = next(iter(paths), Path("."))
    folder = Path(first).resolve()
    if not folder.is_dir():
        folder = folder.parent
    return ProjectFacts(folder, tuple(files))


# --- the extensions' ops ------------------------------------------------------------------------------------------


def extension_ops(top: Path) -> dict[str, dict[str, str]]:
    """ProjectFacts.extension_ops of the project at ``top`` (read afresh: C++ files change between runs)."""
    cpp_files, setups = _walk(top)
    modules = _setup_extensions(setups, top)
    by_source = {source: name for name, sources in modules.items() for source in sources}
    # (`os.path.join("csrc", "ops.cpp")` lists only the file's name)
    by_name = {source.rsplit("/", 1)[-1]: name for name, sources in modules.items() for source in sources}
    found: dict[str, dict[str, set[str]]] = {name: {} for name in modules}
    for path in cpp_files:
        try:
            text = path.read_text("utf-8", errors="replace")
        except OSError:
            continue
        if "PYBIND11_MODULE" not in text and "TORCH_LIBRARY" not in text:
            continue
        shown = path.relative_to(top).as_posix()
        for bound, op in bindings(text):
            # TORCH_EXTENSION_NAME: the name setup.py gives the extension that compiles this file (a JIT build
            # names it in Python, where the module is known anyway)
            where = (
                (by_source.get(shown) or by_name.get(path.name) or _only(modules))
                if bound == EXTENSION_NAME_MACRO
                else bound
            )
            if where is not None:
                found.setdefault(where, {}).setdefault(op, set()).add(shown)
    return {name: {op: ", ".join(sorted(files)) for op, files in ops.items()} for name, ops in found.items()}


def _only(modules: dict[str, tuple[str, ...]]) -> str | None:
    """The one CUDAExtension of a project whose setup.py lists its sources in a way not read here."""
    unlisted = [name for name, sources in modules.items() if not sources]
    return unlisted[0] if len(modules) == 1 and unlisted else None


def _walk(top: Path) -> tuple[list[Path], list[Path]]:
    """The C++/CUDA sources and the setup.py files below ``top`` (skipped folders as discovery skips them)."""
    cpp: list[Path] = []
    setups: list[Path] = []
    for folder, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".") and not d.endswith("-info"))
        for name in sorted(names):
            if name.endswith(CPP_SUFFIXES) and len(cpp) < MAX_CPP_FILES:
                cpp.append(Path(folder, name))
            elif name == "setup.py":
                setups.append(Path(folder, name))
    return cpp, setups


def _setup_extensions(setups: list[Path], top: Path) -> dict[str, tuple[str, ...]]:
    """Module name -> its C++/CUDA sources (relative to ``top``) of every ``CUDAExtension("pkg.name", [...])``."""
    modules: dict[str, tuple[str, ...]] = {}
    for setup in setups:
        try:
            tree = ast.parse(setup.read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        base = setup.parent.relative_to(top)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or _called(node.func) != "CUDAExtension":
                continue
            name = _argument(node, "name", 0)
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                continue
            sources = _argument(node, "sources", 1)
            listed = [
                (base / n.value).as_posix().removeprefix("./")
                for n in (ast.walk(sources) if sources is not None else ())
                if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.endswith(CPP_SUFFIXES)
            ]
            modules[name.value] = tuple(listed)
    return modules


def _called(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _argument(call: ast.Call, keyword: str, index: int) -> ast.expr | None:
    for item in call.keywords:
        if item.arg == keyword:
            return item.value
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    return positional[index] if index < len(positional) else None
