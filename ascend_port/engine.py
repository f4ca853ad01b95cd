"""A run over many files: discovery, parallel porting, and the per-file results.

Workers read, port and diff their files themselves and send back only findings, the new bytes and the diff, so
the parent never holds the sources of unchanged files. One bad file is reported with its reason and never stops
the run.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping

from ascend_port.cache import Entry, ResultCache, cache_root, config_fingerprint
from ascend_port.codemods import Handler, PortError, handler_for
from ascend_port.diffing import unified_diff
from ascend_port.discovery import discover
from ascend_port.findings import FileResult
from ascend_port.rules import Selection
from ascend_port.sources import SourceError


@dataclass(frozen=True)
class RunConfig:
    selection: Selection = field(default_factory=Selection)
    options: Mapping[str, str] = field(default_factory=dict)
    jobs: int = 0  # 0: all cores
    exclude: tuple[str, ...] = ()
    cache: bool = True  # reuse results of unchanged files (see cache.py); --no-cache turns it off

    @property
    def workers(self) -> int:
        return self.jobs if self.jobs > 0 else (os.cpu_count() or 1)


@dataclass
class RunResult:
    files: list[FileResult]

    @property
    def changed(self) -> list[FileResult]:
        return [f for f in self.files if f.changed]

    @property
    def errors(self) -> list[FileResult]:
        return [f for f in self.files if f.error]


def display_path(path: Path) -> str:
    """Relative to the working directory when below it (what `git apply` expects), else absolute."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def port_file(path: Path, config: RunConfig) -> FileResult:
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
    if not config.cache:
        return _port_data(result, handler, data, config)[0]
    # The cache is keyed by the bytes just read, so a file that changes between runs is always ported afresh.
    results = ResultCache(cache_root(), config_fingerprint(type(handler).__name__, config.selection, config.options))
    key = results.key(data)
    entry = results.load(key)
    if entry is not None:
        result.findings, result.error, result.skipped = list(entry.findings), entry.error, entry.skipped
        result.new_bytes = entry.new_bytes
        result.diff = diff_header(shown) + entry.diff_body if entry.new_bytes is not None else b""
        return result
    result, cacheable = _port_data(result, handler, data, config)
    if cacheable:
        body = result.diff[len(diff_header(shown)):]
        results.store(key, Entry(tuple(result.findings), result.new_bytes, body, result.error, result.skipped))
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
    except Exception as error:  # noqa: BLE001 - one file's failure must not stop the run
        result.error = f"internal error ({type(error).__name__}: {error}); the file is left unchanged"
        return result, False
    result.findings = outcome.findings
    if new_bytes is not None and new_bytes != data:
        result.new_bytes = new_bytes
        encoding = outcome.source.encoding.replace("-sig", "")
        diff = unified_diff(result.path, outcome.source.text, outcome.new_text)
        body = diff[len(f"--- a/{result.path}\n+++ b/{result.path}\n"):]
        result.diff = diff_header(result.path) + body.encode(encoding, errors="surrogateescape")
    return result, True


def _port_batch(paths: list[Path], config: RunConfig) -> list[FileResult]:
    return [port_file(p, config) for p in paths]


def run(paths: Iterable[Path], config: RunConfig, on_progress: Callable[[int, int], None] | None = None) -> RunResult:
    files = discover([Path(p) for p in paths], lambda p: handler_for(p) is not None, config.exclude)
    total = len(files)
    results: list[FileResult] = []
    workers = min(config.workers, max(1, total // 4))
    if workers <= 1:
        for path in files:
            results.append(port_file(path, config))
            if on_progress:
                on_progress(len(results), total)
        return RunResult(results)
    # Small batches keep both cores busy to the end; files are sorted, so a batch shares a folder.
    batch = max(1, min(32, total // (workers * 8)))
    batches = [files[i:i + batch] for i in range(0, total, batch)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for batch_results in pool.map(_port_batch, batches, [config] * len(batches)):
            results.extend(batch_results)
            if on_progress:
                on_progress(len(results), total)
    return RunResult(results)
