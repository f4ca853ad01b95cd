"""The project a run ports, read once: where it is (the folder given, the top of its project), the files that pin
its requirements and its torch pin (the target torch-npu release, run/target.py). It is what the rules' project
steps read (core/porting.Project): the lowest transformers release it allows (NPU803), the ops its C++/CUDA
extensions bind (NPU502). Every file is ported on its own, so what they find reaches the rules as port options,
part of every file's cache key: a changed pin or a new extension op ports the files afresh.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from ascend_port.run.target import Inferred, torch_target

# Where a project pins its requirements, looked for in the folder given (or the folder of the file given) and its
# parents up to the top of its project.
PIN_FILES = ("requirements*.txt", "requirements/*.txt", "pyproject.toml", "setup.py", "setup.cfg")
PROJECT_TOPS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
# The run's own files that can pin requirements (port/filetypes.py kinds), wherever they are below the paths given.
REQUIREMENT_KINDS = ("requirements", "pyproject", "setup.py", "setup.cfg")


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


def facts(paths: Iterable[Path], files: Iterable[Path] = ()) -> ProjectFacts:
    """The facts of the project around the first of ``paths`` (the working directory without any)."""
    first = next(iter(paths), Path("."))
    folder = Path(first).resolve()
    if not folder.is_dir():
        folder = folder.parent
    return ProjectFacts(folder, tuple(files))
