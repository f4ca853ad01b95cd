"""A content-addressed cache of per-file results, so an unchanged file is not parsed again.

An entry is found by a hash of everything a file's result depends on: its bytes, the file handler, the effective
configuration (the enabled rules and the options), and a fingerprint of the tool itself (the source and data files
of this package, and the Python and LibCST versions). Editing a rule's code therefore invalidates every entry,
which is what a tool under development needs; entries of older fingerprints live in their own folder and can be
deleted at any time.

An entry holds only plain data, checked before use: a magic line, a checksum of the rest, a JSON header (findings as
rule ID, line, message, applied; error and skip reasons; the lengths of two blobs) and the blobs themselves (the
new bytes and the diff without its path header, so a cache survives a change of working directory). Anything that
does not check out (truncated, garbled, unknown rule, a different key) is a miss; nothing is ever unpickled or
evaluated. Entries are written through a temporary file and ``os.replace``, so parallel workers and interrupted
runs never leave a half-written entry under a real name.

Beside the entries of a tool fingerprint, ``rules.json`` keeps its rule catalogue (``use_stored_rules``): a run
answered from the cache then never imports the rule modules, and with them LibCST.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sys
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import ascend_port.rules.registry as rule_catalogue
from ascend_port import __version__
from ascend_port.core.findings import Finding
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.rules.registry import all_rules, get_rule

MAGIC = b"ascend-port cache 1\n"
DIGEST_SIZE = 32
_LENGTH = 4  # bytes of the big-endian header length


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/ascend-port``, else ``~/.cache/ascend-port`` (a relative XDG_CACHE_HOME is ignored, as the
    XDG spec asks)."""
    return _cache_root(os.environ.get("XDG_CACHE_HOME", ""), os.environ.get("HOME", ""))


@lru_cache(maxsize=16)
def _cache_root(xdg_cache_home: str, home: str) -> Path:  # (home: part of the key, read by Path.home)
    root = Path(xdg_cache_home) if xdg_cache_home and os.path.isabs(xdg_cache_home) else Path.home() / ".cache"
    return root / "ascend-port"


PACKAGE = Path(__file__).resolve().parents[1]  # ascend_port/: every rule, every data file


@cache
def tool_fingerprint() -> str:
    """A hash of the code and data that decide a result: this package's files and the parser versions."""
    return fingerprint(PACKAGE, f"{__version__}\0{sys.version}\0{_libcst_version()}")


def fingerprint(package: Path, versions: str) -> str:
    """A hash of the versions and of every file under ``package`` (names and contents; code, rule data and any
    data file a rule may read), bytecode aside."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(versions.encode() + b"\0")
    for path in sorted(package.rglob("*")):
        if path.is_file() and path.suffix not in (".pyc", ".pyo") and "__pycache__" not in path.parts:
            digest.update(path.relative_to(package).as_posix().encode() + b"\0")
            digest.update(hashlib.blake2b(path.read_bytes(), digest_size=16).digest())
    return digest.hexdigest()


def _libcst_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("libcst")
    except PackageNotFoundError:
        return "unknown"


def config_fingerprint(handler: str, selection: Selection, options: PortOptions) -> bytes:
    """The effective configuration: two spellings of one rule set (``--select NPU1`` or every NPU1xx ID) share
    entries; anything that can change a result (a rule, an option, the handler) separates them."""
    enabled = [r.id for r in all_rules() if selection.enabled(r)]
    text = json.dumps([handler, enabled, options.cache_key()])
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


def result_cache(handler: str, selection: Selection, options: PortOptions) -> ResultCache:
    """The cache for one configuration, built once per process and configuration (not once per file)."""
    return _result_cache(handler, selection, options, cache_root(), tool_fingerprint())


@lru_cache(maxsize=64)
def _result_cache(handler: str, selection: Selection, options: PortOptions, root: Path, tool: str) -> ResultCache:
    return ResultCache(root, config_fingerprint(handler, selection, options))  # (tool: part of the key)


RULES_MAGIC = b"ascend-port rules 1\n"


def use_stored_rules() -> None:
    """Take the rule catalogue from the cache, so that a run answered from the cache never imports the rule modules
    (LibCST and every transform: about as long as the rest of such a run). The first run of a tool version, which
    imports them anyway, writes it. The file sits in the folder of the tool's fingerprint, so it is always this
    code's catalogue; one that does not check out is ignored (and replaced)."""
    if rule_catalogue._modules_loaded:
        return  # nothing to save: the modules are there
    path = cache_root() / tool_fingerprint()[:20] / "rules.json"
    try:
        raw = path.read_bytes()
    except OSError:
        raw = b""
    body = raw[len(RULES_MAGIC) + DIGEST_SIZE :]
    if (
        raw.startswith(RULES_MAGIC)
        and hashlib.blake2b(body, digest_size=DIGEST_SIZE).digest()
        == raw[len(RULES_MAGIC) : len(RULES_MAGIC) + DIGEST_SIZE]
    ):
        try:
            stored = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            stored = None
        if (
            isinstance(stored, dict)
            and stored.get("tool") == tool_fingerprint()
            and rule_catalogue.use_snapshot(stored.get("rules"))
        ):
            return
    body = json.dumps({"tool": tool_fingerprint(), "rules": rule_catalogue.snapshot_rules()}).encode()
    _write_atomic(path, RULES_MAGIC + hashlib.blake2b(body, digest_size=DIGEST_SIZE).digest() + body)


_TEMPORARY = itertools.count()


def _write_atomic(path: str | Path, data: bytes) -> None:
    """Write through a temporary file and ``os.replace``; a cache that cannot be written (read-only, full disk) is
    simply not used. (Plain system calls: a cold run writes an entry per file, and the tempfile and pathlib ways
    cost as much as the rest of an unchanged file's port.)"""
    folder = os.path.dirname(path)
    for _ in range(100):
        tmp = os.path.join(folder, f".tmp-{os.getpid()}-{next(_TEMPORARY)}")
        try:
            fd = _create(tmp, folder)
            break
        except FileExistsError:
            continue  # left by a process that had this ID before
        except OSError:
            return
    else:
        return
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _create(path: str, folder: str) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        return os.open(path, flags, 0o600)
    except FileNotFoundError:
        os.makedirs(folder, mode=0o700, exist_ok=True)  # (the mode is the new folder's; its parents get the default)
        return os.open(path, flags, 0o600)


@dataclass(frozen=True)
class Entry:
    """What a FileResult needs, as plain data. ``diff_body`` is the diff without its ``---``/``+++`` lines."""

    findings: tuple[Finding, ...] = ()
    new_bytes: bytes | None = None
    diff_body: bytes = b""
    error: str | None = None
    skipped: str | None = None


class ResultCache:
    """Entries of one tool fingerprint and one configuration, under ``root/<tool fingerprint>/``."""

    def __init__(self, root: Path, config: bytes) -> None:
        self.directory = root / tool_fingerprint()[:20]
        self._folder = str(self.directory)
        self._config = config
        self._hash = hashlib.blake2b(config, digest_size=DIGEST_SIZE)

    def key(self, data: bytes) -> str:
        digest = self._hash.copy()  # blake2b(config + data), without copying the file's bytes
        digest.update(data)
        return digest.hexdigest()

    def _path(self, key: str) -> str:
        return os.path.join(self._folder, key[:2], key[2:])

    def load(self, key: str) -> Entry | None:
        """The entry for ``key``, or None when there is none or it does not check out."""
        try:
            with open(self._path(key), "rb") as handle:
                raw = handle.read()
        except OSError:
            return None
        try:
            return decode(raw, key)
        except (ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError):
            return None

    def store(self, key: str, entry: Entry) -> None:
        """Write the entry atomically; a cache that cannot be written (read-only, full disk) is simply not used."""
        _write_atomic(self._path(key), encode(entry, key))


def encode(entry: Entry, key: str) -> bytes:
    new = entry.new_bytes
    header = json.dumps(
        {
            "key": key,
            "findings": [[f.rule.id, f.line, f.message, f.applied, f.todo] for f in entry.findings],
            "new": -1 if new is None else len(new),
            "diff": len(entry.diff_body),
            "error": entry.error,
            "skipped": entry.skipped,
        },
        ensure_ascii=True,
    ).encode("ascii")
    body = len(header).to_bytes(_LENGTH, "big") + header + (new or b"") + entry.diff_body
    return MAGIC + hashlib.blake2b(body, digest_size=DIGEST_SIZE).digest() + body


def decode(raw: bytes, key: str) -> Entry:
    """Parse and validate an entry; raises ValueError (or KeyError for an unknown rule) when it does not check out."""
    if not raw.startswith(MAGIC):
        raise ValueError("not a cache entry")
    digest = raw[len(MAGIC) : len(MAGIC) + DIGEST_SIZE]
    body = raw[len(MAGIC) + DIGEST_SIZE :]
    if len(digest) != DIGEST_SIZE or hashlib.blake2b(body, digest_size=DIGEST_SIZE).digest() != digest:
        raise ValueError("checksum mismatch")
    size = int.from_bytes(body[:_LENGTH], "big")
    header: Any = json.loads(body[_LENGTH : _LENGTH + size].decode("ascii"))
    if not isinstance(header, dict) or header.get("key") != key:
        raise ValueError("entry of another key")
    new_size, diff_size = header["new"], header["diff"]
    _check(isinstance(new_size, int) and isinstance(diff_size, int) and new_size >= -1 and diff_size >= 0)
    blobs = body[_LENGTH + size :]
    _check(len(blobs) == max(new_size, 0) + diff_size)
    error, skipped = header["error"], header["skipped"]
    _check(error is None or isinstance(error, str))
    _check(skipped is None or isinstance(skipped, str))
    findings = []
    for item in header["findings"]:
        _check(isinstance(item, list) and len(item) == 5)
        rule_id, line, message, applied, todo = item
        _check(isinstance(rule_id, str) and type(line) is int and isinstance(message, str) and type(applied) is bool)
        _check(type(todo) is bool)
        findings.append(Finding(get_rule(rule_id), line, message, applied, todo))
    return Entry(
        findings=tuple(findings),
        new_bytes=None if new_size < 0 else blobs[:new_size],
        diff_body=blobs[max(new_size, 0) :],
        error=error,
        skipped=skipped,
    )


def _check(condition: bool) -> None:
    if not condition:
        raise ValueError("malformed cache entry")
