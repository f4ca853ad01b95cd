"""A run over many files: discovery, parallel porting, and the per-file results.

Workers read, port and diff their files themselves and send back only findings, the new bytes and the diff, so
the parent never holds the sources of unchanged files. One bad file is reported with its reason and never stops
the run.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from ascend_port.core import npu_api
from ascend_port.core.diffing import new_file_diff, unified_diff
from ascend_port.core.findings import FileResult
from ascend_port.core.interrupts import test_sigint
from ascend_port.core.options import DEFAULT, PortOptions
from ascend_port.core.porting import CrossFileEdit, Handler, PortError, Project
from ascend_port.core.selection import Selection
from ascend_port.core.sources import SourceError, decode_python
from ascend_port.port.handlers import PythonHandler, handler_for
from ascend_port.python.device_model import module_family, npu_support
from ascend_port.rules.registry import project_steps, rule_named
from ascend_port.run.cache import Entry, ResultCache, result_cache
from ascend_port.run.discovery import Exclude, Skipped, discover
from ascend_port.run.project_facts import facts as project_facts


@dataclass(frozen=True)
class RunConfig:
    selection: Selection = field(default_factory=Selection)
    options: PortOptions = DEFAULT
    jobs: int = 0  # 0: all cores
    exclude: tuple[Exclude, ...] = ()  # --exclude globs, or a pyproject.toml's (relative to its folder)
    cache: bool = True  # reuse results of unchanged files (see cache.py); --no-cache turns it off
    # the project steps' edits across files (ProjectStep.plan: the attention helpers once per package); off: the
    # caller makes them itself, after its review
    edits_across_files: bool = True

    @property
    def workers(self) -> int:
        return self.jobs if self.jobs > 0 else (os.cpu_count() or 1)


@dataclass
class RunResult:
    files: list[FileResult]
    skipped: list[Skipped] = field(default_factory=list)  # left out by ignore rules or --exclude (display paths)
    target: str = ""  # the torch-npu release the port targets (what its rewrites may use)
    edits: list[CrossFileEdit] = field(default_factory=list)  # the project steps' edits across files (plan)
    created: set[str] = field(default_factory=set)  # display paths of files the port creates (the shared helpers)
    notes: list[str] = field(default_factory=list)  # what the user should know about the run as a whole (stderr)
    roots: list[Path] = field(default_factory=list)  # the folders given (a file's folder): where the port may write
    # the file that shows the project supports the NPU already (device_model.npu_support), or "": the reports count
    # its CUDA paths as kept, not as work (reports/effort.py)
    npu_support: str = ""

    @property
    def changed(self) -> list[FileResult]:
        return [f for f in self.files if f.changed]

    @property
    def errors(self) -> list[FileResult]:
        return [f for f in self.files if f.error]


def display_path(path: Path) -> str:
    """Relative to the working directory when below it (what `git apply` expects), else absolute; symlinks
    resolved. Resolving every component of every file costs more than answering an unchanged file from the cache:
    each folder is resolved once, and from its parent's resolution when it is not a link itself."""
    cwd = os.getcwd()
    folder, name = os.path.split(os.fspath(path))
    if name in ("", ".", "..") or os.path.islink(path):
        return _shown(path.resolve(), cwd)
    return _shown_folder(os.path.join(cwd, folder), cwd) + name


@lru_cache(maxsize=4096)
def _shown_folder(folder: str, cwd: str) -> str:
    """How display_path shows the files of ``folder`` (absolute): the prefix of their names, ending with ``/``,
    or empty for the working directory."""
    shown = _shown(_real_folder(folder), cwd)
    return "" if shown == "." else shown.rstrip("/") + "/"


def _shown(resolved: Path, cwd: str) -> str:
    try:
        return resolved.relative_to(_real_folder(cwd)).as_posix()
    except ValueError:
        return resolved.as_posix()


@lru_cache(maxsize=4096)
def _real_folder(folder: str) -> Path:
    """``Path(folder).resolve()`` of an absolute folder."""
    parent, name = os.path.split(folder)
    if name in ("", ".", "..") or os.path.islink(folder):
        return Path(folder).resolve()
    return _real_folder(parent) / name


def port_file(path: Path, config: RunConfig, caches: dict[type, ResultCache] | None = None) -> FileResult:
    """Port one file. ``caches``: the result caches of the caller's earlier files, by handler type."""
    shown = display_path(path)
    result = FileResult(shown)
    handler = handler_for(path)
    if handler is None:
        result.skipped = "no handler for this file type"
        return result
    try:
        data = path.read_bytes()
    except OSError as error:
        result.error = f"cannot read: {error.strerror or error}"
        return result
    # A module of a per-device family (cuda_accelerator.py beside npu_accelerator.py) is ported by what its siblings
    # are: an option of this file alone, and part of its cache key.
    result.notes = _suppression_notes(shown, path, data)
    family = _family(path)
    if family:
        config = replace(config, options=replace(config.options, family=family))
    if not config.cache:
        return _port_data(result, handler, data, config)[0]
    # The cache is keyed by the bytes just read, so a file that changes between runs is always ported afresh.
    results = _results_for(handler, config, {} if caches is None else caches)
    key = _key(results, data, family)
    entry = results.load(key)
    if entry is not None:
        return replace(_from_entry(entry, shown), notes=result.notes)
    result, cacheable = _port_data(result, handler, data, config)
    if cacheable:
        body = result.diff[len(diff_header(shown)) :]
        results.store(key, Entry(tuple(result.findings), result.new_bytes, body, result.error, result.skipped))
    return result


def _family(path: Path) -> str:
    return module_family(str(path)) if path.suffix == ".py" else ""


def _key(results: ResultCache, data: bytes, family: str) -> str:
    return results.key(data + b"\0" + family.encode() if family else data)


def _results_for(handler: Handler, config: RunConfig, caches: dict[type, ResultCache]) -> ResultCache:
    kind = type(handler)
    if kind not in caches:
        options = replace(config.options, family="")  # (in each file's key instead)
        caches[kind] = result_cache(kind.__name__, config.selection, options)
    return caches[kind]


def _cached(path: Path, results: ResultCache) -> FileResult | None:
    """The result of ``path`` from the cache, or None when the cache does not have it (nothing is ported)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    entry = results.load(_key(results, data, _family(path)))
    if entry is None:
        return None
    shown = display_path(path)
    return replace(_from_entry(entry, shown), notes=_suppression_notes(shown, path, data))


def _suppression_notes(shown: str, path: Path, data: bytes) -> list[str]:
    """A warning for each ID in a `# ascend-port: ignore[...]` comment that names no rule (it suppresses nothing);
    the run goes on."""
    if b"ascend-port:" not in data:
        return []
    from ascend_port.core.suppression import unknown_ids
    from ascend_port.rules.registry import all_rules

    found = unknown_ids(data, path.suffix == ".py", (r.id for r in all_rules()))
    return [
        f"{shown}:{line}: `# ascend-port: ignore[{rule_id}]` names no rule (`ascend-port rules` lists them)"
        for line, rule_id in found
    ]


def _from_entry(entry: Entry, shown: str) -> FileResult:
    result = FileResult(shown, list(entry.findings), entry.new_bytes, b"", entry.error, entry.skipped)
    if entry.new_bytes is not None:
        result.diff = diff_header(shown) + entry.diff_body
    return result


def diff_header(shown: str) -> bytes:
    """The ``---``/``+++`` lines: the path as the file system spells it, whatever the file's encoding."""
    return f"--- a/{shown}\n+++ b/{shown}\n".encode("utf-8", "surrogateescape")


def _port_data(result: FileResult, handler: Handler, data: bytes, config: RunConfig) -> tuple[FileResult, bool]:
    """Port the bytes; the flag is False for unexpected failures, which are never cached."""
    try:
        outcome = handler.port(data, config.selection, config.options)
        new_bytes = None if outcome.new_text is None else outcome.source.encode(outcome.new_text)
    except SourceError as error:
        if error.binary:
            result.skipped = str(error)
        else:
            result.error = str(error)
        return result, True
    except PortError as error:
        result.error = str(error)
        return result, True
    except UnicodeEncodeError as error:
        result.error = f"the port cannot be written in the file's encoding ({error.reason}); the file is left unchanged"
        return result, True
    except Exception as error:
        result.error = f"internal error ({type(error).__name__}: {error}); the file is left unchanged"
        return result, False
    result.findings = outcome.findings
    if config.options.npu_aware and not isinstance(handler, PythonHandler):
        # Requirements, pins and scripts are shared by every device of a project that also runs elsewhere: what
        # would change is reported (a torch-npu requirement would be installed on its CUDA and CPU machines too).
        result.findings = [dataclasses.replace(f, applied=False) for f in result.findings]
        new_bytes = None
    if new_bytes is not None and new_bytes != data and outcome.new_text is not None:
        result.new_bytes = new_bytes
        encoding = outcome.source.encoding.replace("-sig", "")
        diff = unified_diff(result.path, outcome.source.text, outcome.new_text)
        body = diff[len(f"--- a/{result.path}\n+++ b/{result.path}\n") :]
        result.diff = diff_header(result.path) + body.encode(encoding, errors="surrogateescape")
    return result, True


def _port_batch(paths: list[Path], config: RunConfig) -> list[FileResult]:
    caches: dict[type, ResultCache] = {}
    return [port_file(p, config, caches) for p in paths]


COLD_PROBE = 32  # how many files run() looks up in the cache before it takes an all-miss for a cold cache


def run(paths: Iterable[Path], config: RunConfig, on_progress: Callable[[int, int], None] | None = None) -> RunResult:
    handlers: dict[Path, Handler] = {}

    def wanted(path: Path) -> bool:  # (the handler is kept: it is needed again for every file found)
        handler = handler_for(path)
        if handler is None:
            return False
        handlers[path] = handler
        return True

    skipped: list[Skipped] = []
    paths = [Path(p) for p in paths]
    files = discover(paths, wanted, config.exclude, skipped)
    options = config.options
    evidence = None
    if options.other_devices == "keep" and not options.npu_aware:
        evidence = npu_support(str(f) for f in files if f.suffix == ".py")
    if evidence is not None:
        # A project that already runs on the NPU keeps what it does for CUDA on purpose (device_model.py).
        options = replace(options, npu_aware=True)
    # What the project's other files say (its transformers pin for NPU803, its extensions' ops for NPU502): the
    # rules' project steps read it once for the run; options the caller set win.
    config = replace(config, options=project_options(project_facts(paths, files), options))
    # What the cache knows is answered here: a run over unchanged files starts no worker at all.
    known: dict[int, FileResult] = {}
    if config.cache:
        caches: dict[type, ResultCache] = {}
        for i, path in enumerate(files):
            if i == COLD_PROBE and not known:
                # The first files all missed: the cache is cold (a new tool version, a new configuration). The
                # rest go to port_file unread here, which answers from the cache what it can, so that no file is
                # read and hashed twice, once here and once in a worker.
                break
            if (hit := _cached(path, _results_for(handlers[path], config, caches))) is not None:
                known[i] = hit
    todo = [path for i, path in enumerate(files) if i not in known]
    progress = None if on_progress is None else lambda done: on_progress(len(known) + done, len(files))
    if progress:
        progress(0)
    ported = iter(_port_all(todo, config, progress))
    result = RunResult(
        [known[i] if i in known else next(ported) for i in range(len(files))],
        [s._replace(path=display_path(Path(s.path))) for s in skipped],
        npu_api.target_version(config.options),
    )
    result.roots = [p.resolve() if p.is_dir() else p.resolve().parent for p in paths]
    if evidence is not None:
        result.npu_support = display_path(Path(evidence))
        result.notes.append(_npu_support_note(result.npu_support, result.files))
    result.notes.extend(note for file in result.files for note in file.notes)
    if config.edits_across_files:
        edit_across_files(result, config)
    for step in project_steps():
        result.notes.extend(step.after(result.files, config.options))
    return result


def _npu_support_note(evidence: str, files: list[FileResult]) -> str:
    """What a run does to a project that supports the NPU already: the CUDA islands it made device-neutral (NPU122),
    and why the rest stays."""
    island = rule_named("device-neutral-island")
    applied = [f.rule for file in files for f in file.findings if f.applied and not f.todo]
    ported = applied.count(island)
    # The others leave CUDA's code running as it did: an NPU branch beside CUDA's (NPU120), a guarded import, or a
    # rewrite whose last fallback is CUDA's own code (Triton's libdevice, NPU501 and NPU508).
    others = sorted({f"{r.id} {r.name}" for r in applied if r != island})
    fallbacks = f", but for the rewrites that leave CUDA's code as it runs ({', '.join(others)})" if others else ""
    islands = (
        f"{ported} CUDA call{'s' if ported != 1 else ''} outside its device dispatch made device-neutral "
        f"({island.id}: its own accelerator or torch.accelerator, which CUDA runs as before); the rest of "
        if ported
        else ""
    )
    return (
        f"the project supports the NPU already ({evidence} shows it): {islands}its CUDA code is reported, not "
        f"rewritten{fallbacks}: its dispatches name CUDA on purpose, what is left outside them has no device-neutral "
        "spelling, and an NPU rewrite in place would break its CUDA users (the rewrites counted are those an NPU-only "
        "fork would make); `--other-devices drop` rewrites it all (an NPU-only fork)"
    )


def project_options(project: Project, options: PortOptions) -> PortOptions:
    """``options`` with what the rules' project steps read of ``project``."""
    for step in project_steps():
        options = step.facts(project, options)
    return options


# --- the project step: after the per-file ports and the cache, on their new texts ---------------------------------


def edit_across_files(result: RunResult, config: RunConfig) -> None:
    """The project steps' edits across files (core/porting.ProjectStep.plan: the attention helpers once per
    package): the files they rewrite get new bytes and diffs, and each module they write is added to ``result`` as
    a created file (or as a changed one when an earlier run wrote it and it lacks what is needed now)."""
    texts: list[tuple[Path, str]] = []
    by_path: dict[Path, FileResult] = {}
    for file in result.changed:
        if not file.path.endswith(".py") or file.new_bytes is None:
            continue
        path = Path(file.path).resolve()
        try:
            texts.append((path, decode_python(file.new_bytes).text))
        except SourceError:
            continue
        by_path[path] = file
    edits, notes = planned_edits(texts, config.options, result.roots)
    result.notes.extend(notes)
    for edit in edits:
        result.edits.append(edit)
        _apply_edit(edit, by_path, result)


def planned_edits(
    texts: list[tuple[Path, str]], options: PortOptions, roots: list[Path]
) -> tuple[list[CrossFileEdit], list[str]]:
    """What the project steps' plans do to the ported Python ``texts`` (absolute paths): the edits that write
    modules, and every plan's notes (also those of a plan that writes none)."""
    edits: list[CrossFileEdit] = []
    notes: list[str] = []
    for step in project_steps():
        edit = step.plan(texts, options, roots)
        if edit is not None:
            notes.extend(edit.notes)
            if edit.modules:
                edits.append(edit)
    return edits, notes


def _apply_edit(edit: CrossFileEdit, by_path: dict[Path, FileResult], result: RunResult) -> None:
    for path, file in by_path.items():
        new_bytes = edit.rewrite(path, file.new_bytes or b"")
        if new_bytes == file.new_bytes:
            continue
        old = decode_python(path.read_bytes())  # (read a moment ago by the port: it would have failed there)
        file.new_bytes = new_bytes
        new = decode_python(new_bytes)
        body = unified_diff(file.path, old.text, new.text)[len(f"--- a/{file.path}\n+++ b/{file.path}\n") :]
        file.diff = diff_header(file.path) + body.encode(new.encoding.replace("-sig", ""), errors="surrogateescape")
    for module in edit.modules:
        shown = display_path(module.path)
        data = module.text.encode("utf-8")
        if module.existing:
            old_text = module.path.read_text("utf-8")
            if old_text != module.text:
                diff = unified_diff(shown, old_text, module.text).encode("utf-8")
                result.files.append(FileResult(shown, new_bytes=data, diff=diff))
        else:
            result.files.append(FileResult(shown, new_bytes=data, diff=new_file_diff(shown, module.text).encode()))
            result.created.add(shown)


def _port_all(files: list[Path], config: RunConfig, on_progress: Callable[[int], None] | None) -> list[FileResult]:
    total = len(files)
    results: list[FileResult] = []
    workers = min(config.workers, max(1, total // 4))
    if workers <= 1:
        caches: dict[type, ResultCache] = {}
        for path in files:
            results.append(port_file(path, config, caches))
            test_sigint(f"ported:{len(results)}")
            if on_progress:
                on_progress(len(results))
        return results
    # Small batches keep both cores busy to the end; files are sorted, so a batch shares a folder.
    batch = max(1, min(32, total // (workers * 8)))
    batches = [files[i : i + batch] for i in range(0, total, batch)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for batch_results in pool.map(_port_batch, batches, [config] * len(batches)):
            results.extend(batch_results)
            if on_progress:
                on_progress(len(results))
    return results
