"""The result cache: a second run over unchanged files parses nothing and gives the same results; any change to a
file, the rule selection, the options or the tool gives fresh results; a damaged entry is a miss, never trusted;
--no-cache neither reads nor writes it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ascend_port.run.cache as cache_module
from ascend_port.cli import app
from ascend_port.core.findings import Finding
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import PythonHandler
from ascend_port.rules.registry import get_rule
from ascend_port.run.cache import Entry, ResultCache, cache_root, config_fingerprint, decode, encode, fingerprint
from ascend_port.run.engine import RunConfig, port_file, run

CUDA_MODULE = "import torch\n\nx = torch.ones(2).cuda()\ntorch.cuda.synchronize()\n"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The bytes of every file actually ported (not answered from the cache), in this process."""
    seen: list[bytes] = []
    original = PythonHandler.port

    def counting(self, data, selection, options):
        seen.append(data)
        return original(self, data, selection, options)

    monkeypatch.setattr(PythonHandler, "port", counting)
    return seen


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(root)
    (root / "train.py").write_text(CUDA_MODULE)
    (root / "clean.py").write_text("x = 1\n")
    (root / "py2.py").write_text("print 'cuda'\nx = y.cuda()\n")
    return root


def snapshot(result) -> list[tuple]:
    return [
        (
            f.path,
            [(x.rule.id, x.line, x.message, x.applied) for x in f.findings],
            f.new_bytes,
            f.diff,
            f.error,
            f.skipped,
        )
        for f in result.files
    ]


def entries() -> list[Path]:
    return sorted(p for p in cache_root().rglob("*") if p.is_file())


def test_warm_run_parses_nothing_and_gives_the_same_results(tree: Path, calls: list[bytes]) -> None:
    cold = run([tree], RunConfig(jobs=1))
    assert len(calls) == 3
    assert len(entries()) == 3  # the unparsable py2.py is cached too: its error does not change
    warm = run([tree], RunConfig(jobs=1))
    assert len(calls) == 3
    assert snapshot(warm) == snapshot(cold)
    uncached = run([tree], RunConfig(jobs=1, cache=False))
    assert snapshot(uncached) == snapshot(cold)
    assert b"+x = torch.ones(2).npu()" in cold.changed[0].diff
    assert any("parse" in (f.error or "") for f in warm.files)


def test_a_changed_file_is_ported_afresh(tree: Path, calls: list[bytes]) -> None:
    run([tree], RunConfig(jobs=1))
    (tree / "train.py").write_text(CUDA_MODULE.replace("x = ", "y = "))
    result = run([tree], RunConfig(jobs=1))
    assert len(calls) == 4
    (changed,) = result.changed
    assert b"+y = torch.ones(2).npu()" in changed.diff and changed.new_bytes.count(b"y = ") == 1


def test_selection_and_options_are_part_of_the_key(tree: Path, calls: list[bytes]) -> None:
    run([tree], RunConfig(jobs=1))
    ignored = run([tree / "train.py"], RunConfig(selection=Selection(ignore=("NPU101",)), jobs=1))
    assert b".cuda()" in ignored.changed[0].new_bytes and b"torch.npu.synchronize()" in ignored.changed[0].new_bytes
    assert all(f.rule.id != "NPU101" for f in ignored.files[0].findings)
    assert len(calls) == 4
    run([tree / "train.py"], RunConfig(options=PortOptions(attention_backend="mindiesd"), jobs=1))
    assert len(calls) == 5
    # The same rule set spelled another way shares entries.
    run([tree / "train.py"], RunConfig(selection=Selection(select=("NPU",)), jobs=1))
    assert len(calls) == 5


def test_config_fingerprint_follows_the_effective_rule_set() -> None:
    everything = config_fingerprint("PythonHandler", Selection(), PortOptions())
    assert config_fingerprint("PythonHandler", Selection(select=("NPU",)), PortOptions()) == everything
    assert config_fingerprint("PythonHandler", Selection(ignore=("NPU104",)), PortOptions()) != everything
    assert config_fingerprint("PythonHandler", Selection(), PortOptions(attention_backend="mindiesd")) != everything
    assert config_fingerprint("NotebookHandler", Selection(), PortOptions()) != everything
    # every option separates results (the file's family is in each file's own key instead)
    for changed in (
        PortOptions(other_devices="drop"),
        PortOptions(npu_aware=True),
        PortOptions(target="2.1.0.post17"),
        PortOptions(transformers_pin="4.46.1"),
        PortOptions(extension_ops=(("pkg._C", (("op", "a.cpp"),)),)),
    ):
        assert config_fingerprint("PythonHandler", Selection(), changed) != everything
    assert config_fingerprint("PythonHandler", Selection(), PortOptions(family="cuda folder")) == everything


def test_tool_fingerprint_covers_code_data_and_versions(tmp_path: Path) -> None:
    (tmp_path / "rules.py").write_text("X = 1\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "api.json").write_text("{}")
    first = fingerprint(tmp_path, "0.1.0")
    assert fingerprint(tmp_path, "0.1.0") == first
    assert fingerprint(tmp_path, "0.1.1") != first
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "rules.cpython-311.pyc").write_bytes(b"\0")
    assert fingerprint(tmp_path, "0.1.0") == first  # bytecode is not the code
    (tmp_path / "data" / "api.json").write_text('{"npu": []}')
    assert fingerprint(tmp_path, "0.1.0") != first


def test_a_new_tool_fingerprint_misses(tree: Path, calls: list[bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    run([tree / "train.py"], RunConfig(jobs=1))
    monkeypatch.setattr(cache_module, "tool_fingerprint", lambda: "f" * 32)
    run([tree / "train.py"], RunConfig(jobs=1))
    assert len(calls) == 2


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw[:-1],  # truncated blob
        lambda raw: raw[: len(cache_module.MAGIC) + 10],  # truncated checksum
        lambda raw: b"",
        lambda raw: raw[:60] + bytes([raw[60] ^ 0x20]) + raw[61:],  # one flipped bit in the header
        lambda raw: raw[:-1] + bytes([raw[-1] ^ 0x01]),  # one flipped bit in the diff: only the checksum sees it
        lambda raw: b"garbage" + raw,
        lambda raw: raw + b"\0",
        lambda raw: os.urandom(len(raw)),
    ],
)
def test_a_damaged_entry_is_a_miss_and_is_replaced(tree: Path, calls: list[bytes], damage) -> None:
    cold = run([tree / "train.py"], RunConfig(jobs=1))
    (entry,) = entries()
    entry.write_bytes(damage(entry.read_bytes()))
    again = run([tree / "train.py"], RunConfig(jobs=1))
    assert len(calls) == 2
    assert snapshot(again) == snapshot(cold)
    run([tree / "train.py"], RunConfig(jobs=1))
    assert len(calls) == 2  # the damaged entry was replaced by a good one


def _forge(key: str, header_edit) -> bytes:
    """A well-formed entry (right magic and checksum) whose content breaks one rule of the format."""
    good = Entry((Finding(get_rule("NPU101"), 3, "m", True),), b"new", b"diff")
    raw = encode(good, key)
    body = raw[len(cache_module.MAGIC) + cache_module.DIGEST_SIZE :]
    size = int.from_bytes(body[:4], "big")
    header = header_edit(body[4 : 4 + size].decode())
    new_body = len(header).to_bytes(4, "big") + header.encode() + body[4 + size :]
    import hashlib

    return cache_module.MAGIC + hashlib.blake2b(new_body, digest_size=cache_module.DIGEST_SIZE).digest() + new_body


@pytest.mark.parametrize(
    "edit",
    [
        lambda h: h.replace('"NPU101"', '"NPU999"'),  # a rule this version does not know
        lambda h: h.replace('"key": "', '"key": "0'),  # an entry of another key
        lambda h: h.replace('"new": 3', '"new": 4'),  # blob lengths that do not add up
        lambda h: h.replace('"new": 3', '"new": -2'),
        lambda h: h.replace(", 3, ", ', "3", '),  # a line that is not a number
        lambda h: h.replace("true", "1"),  # applied must be a bool
        lambda h: h.replace('"error": null', '"error": ["x"]'),
        lambda h: h.replace('"findings": [[', '"findings": [["x"], ['),
        lambda h: "[]",
        lambda h: "{not json",
    ],
)
def test_a_well_formed_but_invalid_entry_is_rejected(edit) -> None:
    key = "ab" * 32
    assert decode(_forge(key, lambda h: h), key).new_bytes == b"new"  # the forge itself works
    with pytest.raises((ValueError, KeyError, TypeError)):
        decode(_forge(key, edit), key)


def test_entries_hold_plain_data_only(tree: Path) -> None:
    run([tree], RunConfig(jobs=1))
    for entry in entries():
        raw = entry.read_bytes()
        assert raw.startswith(cache_module.MAGIC)
        assert b"pickle" not in raw and b"\x80\x04" not in raw[:80]


def test_the_cache_is_read_and_no_cache_bypasses_it(tree: Path, calls: list[bytes]) -> None:
    """Plant a valid entry with a made-up result: a cached run reports it (so the cache is really used), a
    --no-cache run ports the file and never writes an entry."""
    config = RunConfig(jobs=1)
    results = ResultCache(cache_root(), config_fingerprint("PythonHandler", config.selection, config.options))
    data = (tree / "train.py").read_bytes()
    results.store(results.key(data), Entry((Finding(get_rule("NPU102"), 1, "planted", False),)))
    planted = run([tree / "train.py"], config)
    assert [f.message for f in planted.files[0].findings] == ["planted"] and not calls
    before = entries()
    runner = CliRunner()
    result = runner.invoke(app, ["scan", "train.py", "--no-cache"], catch_exceptions=False)
    assert "planted" not in result.stdout and "NPU101" in result.stdout
    result = runner.invoke(app, ["apply", "clean.py", "train.py", "--dry-run", "--no-cache"], catch_exceptions=False)
    assert "+x = torch.ones(2).npu()" in result.stdout
    assert entries() == before
    assert "planted" in runner.invoke(app, ["scan", "train.py"], catch_exceptions=False).stdout


def test_the_diff_header_follows_the_working_directory(
    tree: Path, monkeypatch: pytest.MonkeyPatch, calls: list[bytes]
) -> None:
    (tree / "sub").mkdir()
    (tree / "sub" / "mod.py").write_text(CUDA_MODULE)
    assert port_file(tree / "sub" / "mod.py", RunConfig()).diff.startswith(b"--- a/sub/mod.py\n+++ b/sub/mod.py\n")
    monkeypatch.chdir(tree / "sub")
    warm = port_file(tree / "sub" / "mod.py", RunConfig())
    assert len(calls) == 1
    assert warm.diff.startswith(b"--- a/mod.py\n+++ b/mod.py\n@@")


def test_the_diff_header_is_in_the_file_system_encoding(tree: Path) -> None:
    """A latin-1 file at a path with non-latin-1 characters: header in UTF-8 (the path's bytes), body in latin-1."""
    path = tree / "модуль.py"
    path.write_bytes("# -*- coding: latin-1 -*-\nimport torch\ns = 'é'\nx = t.cuda()\n".encode("latin-1"))
    for _ in range(2):  # cold, then warm
        result = port_file(path, RunConfig())
        assert result.error is None
        assert result.diff.startswith("--- a/модуль.py\n".encode())
        assert " s = 'é'\n".encode("latin-1") in result.diff


def test_an_unusable_cache_folder_does_not_stop_a_run(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    result = run([tree], RunConfig(jobs=1))
    assert len(result.changed) == 1 and len(result.errors) == 1


def test_relative_xdg_cache_home_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert cache_root() == tmp_path / ".cache" / "ascend-port"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_root() == tmp_path / ".cache" / "ascend-port"


def test_internal_errors_are_not_cached(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self, data, selection, options):
        raise RuntimeError("boom")

    monkeypatch.setattr(PythonHandler, "port", broken)
    assert "internal error" in port_file(tree / "train.py", RunConfig()).error
    assert entries() == []


def test_parallel_workers_share_the_cache(tree: Path) -> None:
    for i in range(60):
        (tree / f"m{i}.py").write_text(CUDA_MODULE.replace("2", str(i)) if i % 2 else f"x = {i}\n")
    cold = run([tree], RunConfig(jobs=2))
    warm = run([tree], RunConfig(jobs=2))
    assert snapshot(warm) == snapshot(cold)
    assert len(entries()) == 63
    assert not [p for p in entries() if p.name.startswith(".tmp-")]  # no temporary file is left behind


def test_a_warm_run_starts_no_worker(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ascend_port.run.engine as engine

    for i in range(20):
        (tree / f"m{i}.py").write_text(CUDA_MODULE.replace("2", str(i)))
    cold = run([tree], RunConfig(jobs=2))

    def no_pool(*args, **kwargs):
        raise AssertionError("a worker pool was started")

    monkeypatch.setattr(engine, "ProcessPoolExecutor", no_pool)
    progress: list[tuple[int, int]] = []
    warm = run([tree], RunConfig(jobs=2), lambda done, total: progress.append((done, total)))
    assert snapshot(warm) == snapshot(cold)
    assert progress == [(23, 23)]
    (tree / "m3.py").write_text("x = 1\n")  # one miss: ported in this process, no pool for one file
    assert run([tree], RunConfig(jobs=2)).files[[f.path for f in cold.files].index("m3.py")].new_bytes is None


def test_tool_fingerprint_reads_the_whole_package() -> None:
    """A change to any rule must invalidate cached results, not only a change to the cache's own layer."""
    from ascend_port.run import cache

    assert (cache.PACKAGE / "rules" / "device" / "calls.py").is_file() and (cache.PACKAGE / "data").is_dir()
    assert cache.PACKAGE.name == "ascend_port"
