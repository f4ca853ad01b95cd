"""What a run costs besides porting (issue 9): a run answered from the cache imports neither LibCST nor the git
workflow, through a rule catalogue stored in the cache that must be exactly the catalogue; the shortcuts of the
engine (paths shown, files found, the cold-cache probe) give what the plain computations give."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ascend_port.rules.registry as rules_module
import ascend_port.run.cache as cache_module
from ascend_port.core.catalogue import Confidence, Rule, declared
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import PythonHandler, handler_for
from ascend_port.rules.registry import all_rules, get_rule, snapshot_rules, use_snapshot
from ascend_port.run.cache import cache_root, tool_fingerprint, use_stored_rules
from ascend_port.run.discovery import discover
from ascend_port.run.engine import COLD_PROBE, RunConfig, display_path, run

CUDA_MODULE = "import torch\n\nx = torch.ones(2).cuda()\n"

# Runs the command line as its console script does, then names the heavy modules the process loaded.
CLI_RUN = """
import sys
from ascend_port.cli import main
sys.argv = ["ascend-port", *sys.argv[1:]]
try:
    main()
except SystemExit as done:
    code = done.code
heavy = ("libcst", "git", "ascend_port.rules.device", "ascend_port.git.workflow", "rich.markdown", "ascend_port.reports.model")
import gc
sys.stderr.write(f"GC {gc.get_freeze_count() > 0}\\n")
sys.stderr.write("LOADED " + " ".join(m for m in heavy if m in sys.modules) + "\\n")
"""


def _cli(*args: str, cwd: Path) -> tuple[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", CLI_RUN, *args], cwd=cwd, capture_output=True, text=True, env=os.environ, timeout=120
    )
    return done.stdout, done.stderr


@pytest.fixture
def rules_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule catalogue as a fresh process has it: no snapshot taken, the rule modules not known to be loaded
    (they are imported in this process, which changes nothing but the flag)."""
    all_rules()  # every rule module imported
    monkeypatch.setattr(rules_module, "_SNAPSHOT", None)
    monkeypatch.setattr(rules_module, "_modules_loaded", False)


def _stored() -> Path:
    return cache_root() / tool_fingerprint()[:20] / "rules.json"


def test_a_warm_run_loads_neither_libcst_nor_the_git_workflow(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(CUDA_MODULE)
    (tmp_path / "clean.py").write_text("x = 1\n")
    for _ in range(3):
        cold_out, cold_err = _cli("apply", ".", "--dry-run", cwd=tmp_path)
        assert "libcst" in cold_err.split("LOADED")[1]  # the cold run ports, so it loads the transforms
        warm_out, warm_err = _cli("apply", ".", "--dry-run", cwd=tmp_path)
        if len(list(cache_root().glob("*/rules.json"))) == 1:
            break
        shutil.rmtree(cache_root())  # the code changed between the runs (a shared work tree): once more
    assert warm_out == cold_out and "+x = torch.ones(2).npu()" in warm_out
    assert warm_err.split("GC")[0] == cold_err.split("GC")[0]  # the same totals line
    assert warm_err.split("LOADED")[1].split() == []
    scan_out, scan_err = _cli("scan", ".", cwd=tmp_path)
    assert "NPU101" in scan_out and scan_err.split("LOADED")[1].split() == []


def test_no_cache_neither_reads_nor_writes_the_stored_catalogue(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(CUDA_MODULE)
    _cli("apply", ".", "--dry-run", "--no-cache", cwd=tmp_path)
    assert not cache_root().exists()
    _cli("apply", ".", "--dry-run", cwd=tmp_path)
    # (found, not computed: in a shared work tree the code, and so its fingerprint, may change between processes)
    (stored,) = cache_root().glob("*/rules.json")
    stored.write_bytes(b"garbage")
    _cli("apply", ".", "--dry-run", "--no-cache", cwd=tmp_path)
    assert stored.read_bytes() == b"garbage"


def test_the_snapshot_is_the_catalogue(rules_state: None) -> None:
    real = sorted(declared().values(), key=lambda r: r.id)
    assert len(real) > 50
    assert use_snapshot(json.loads(json.dumps(snapshot_rules())))
    assert rules_module._SNAPSHOT is not None
    assert all_rules() == real  # every field of every rule
    assert get_rule("npu101") == declared()["NPU101"]
    with pytest.raises(KeyError, match="NPU999"):
        get_rule("NPU999")


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: None,
        lambda data: [],
        lambda data: [*data, data[0]],  # a rule twice
        lambda data: [{**data[0], "confidence": "certain"}, *data[1:]],
        lambda data: [{k: v for k, v in data[0].items() if k != "doc"}, *data[1:]],
        lambda data: [{**data[0], "retired": 0}, *data[1:]],
        lambda data: ["NPU101", *data[1:]],
    ],
)
def test_a_snapshot_that_does_not_check_out_is_refused(rules_state: None, damage) -> None:
    assert not use_snapshot(damage(snapshot_rules()))
    assert rules_module._SNAPSHOT is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: b"",
        lambda raw: raw[:-1],
        lambda raw: raw[:-2] + bytes([raw[-2] ^ 0x01]) + raw[-1:],  # a flipped bit: only the checksum sees it
        lambda raw: b"garbage" + raw,
        "another tool",
        "not a list",
    ],
)
def test_a_damaged_stored_catalogue_is_ignored_and_replaced(rules_state: None, damage) -> None:
    use_stored_rules()  # none stored: the modules answer, and the catalogue is written
    good = _stored().read_bytes()
    assert rules_module._SNAPSHOT is None
    if isinstance(damage, str):  # well-formed (right magic and checksum), wrong content
        stored = json.loads(good[len(cache_module.RULES_MAGIC) + cache_module.DIGEST_SIZE :])
        stored = {**stored, "tool": "0" * 32} if damage == "another tool" else {**stored, "rules": {"NPU101": 1}}
        body = json.dumps(stored).encode()
        import hashlib

        damaged = cache_module.RULES_MAGIC + hashlib.blake2b(body, digest_size=cache_module.DIGEST_SIZE).digest() + body
    else:
        damaged = damage(good)
    _stored().write_bytes(damaged)
    rules_module._modules_loaded = False
    use_stored_rules()
    assert rules_module._SNAPSHOT is None  # refused: the modules answered
    assert _stored().read_bytes() == good  # and the good one is back
    rules_module._modules_loaded = False
    use_stored_rules()
    assert rules_module._SNAPSHOT is not None
    assert all_rules() == sorted(declared().values(), key=lambda r: r.id)


def test_selection_verdicts_follow_the_rule_and_are_not_pickled() -> None:
    selection = Selection(min_confidence=Confidence.MEDIUM)
    high = Rule("NPU199", "x", Confidence.HIGH, "s", "d")
    low = Rule("NPU199", "x", Confidence.LOW, "s", "d")  # the same ID, another rule object
    assert selection.enabled(high) and not selection.enabled(low) and selection.enabled(high)
    copy = pickle.loads(pickle.dumps(selection))
    assert copy == selection and hash(copy) == hash(selection)
    assert b"NPU199" not in pickle.dumps(selection)
    assert copy.enabled(high) and not copy.enabled(low)
    assert not Selection(ignore=("NPU19",)).enabled(high)


def test_display_path_resolves_like_path_resolve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "real" / "sub"
    real.mkdir(parents=True)
    (real / "a.py").write_text("")
    (tmp_path / "real" / "b.py").write_text("")
    os.symlink(tmp_path / "real", tmp_path / "link")
    os.symlink(real / "a.py", tmp_path / "alias.py")
    work = tmp_path / "work"
    (work / "own" / "deep").mkdir(parents=True)
    (work / "own" / "deep" / "d.py").write_text("")
    os.symlink(tmp_path / "real", work / "inner")  # a link out of the working directory
    os.symlink(work / "own", work / "mine")  # a link within it
    monkeypatch.chdir(work)
    cases = {
        Path("own/deep/d.py"): "own/deep/d.py",
        work / "own" / "deep" / "d.py": "own/deep/d.py",
        Path("mine/deep/d.py"): "own/deep/d.py",
        Path("mine/deep/../deep/d.py"): "own/deep/d.py",
        Path("inner/sub/a.py"): f"{tmp_path.resolve().as_posix()}/real/sub/a.py",
        Path("inner/sub/../b.py"): f"{tmp_path.resolve().as_posix()}/real/b.py",  # ".." after a link
        tmp_path / "link" / "sub" / ".." / "b.py": f"{tmp_path.resolve().as_posix()}/real/b.py",
        tmp_path / "link" / "sub" / "..": f"{tmp_path.resolve().as_posix()}/real",
        tmp_path / "alias.py": f"{tmp_path.resolve().as_posix()}/real/sub/a.py",  # a link to a file
        Path("../alias.py"): f"{tmp_path.resolve().as_posix()}/real/sub/a.py",
        Path("."): ".",
    }
    for path, expected in cases.items():
        assert display_path(path) == expected, path
    monkeypatch.chdir(tmp_path / "real")
    assert display_path(tmp_path / "link" / "sub" / "a.py") == "sub/a.py"  # the working directory changed
    assert display_path(work / "mine" / "deep" / "d.py") == f"{work.resolve().as_posix()}/own/deep/d.py"


def test_discovery_order_and_what_it_leaves_out(tmp_path: Path) -> None:
    root = tmp_path / "project"
    for name in (
        "b.py",
        "a.py",
        "z/y.py",
        "z/x/w.py",
        "m/n.py",
        "build/skip.py",
        "venv2/mod.py",
        "pkg.egg-info/e.py",
        "requirements.txt",
        "README.md",
        "z/x/requirements-dev.txt",
    ):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x = 1\n")
    (root / "venv2" / "pyvenv.cfg").write_text("home = /usr\n")
    os.mkfifo(root / "fifo.py")  # reading it would block
    os.symlink(root / "a.py", root / "link.py")
    os.symlink(root / "m", root / "linked_folder")
    found = discover([root], lambda p: handler_for(p) is not None)
    assert [p.relative_to(root).as_posix() for p in found] == [
        "a.py",
        "b.py",
        "requirements.txt",
        "m/n.py",
        "z/y.py",
        "z/x/requirements-dev.txt",
        "z/x/w.py",
    ]
    # An explicitly named file is taken, and a file found twice is found once.
    again = discover([root / "m" / "n.py", root, root / "link.py"], lambda p: handler_for(p) is not None)
    assert [p.relative_to(root).as_posix() for p in again][:2] == ["m/n.py", "a.py"] and len(again) == 7


def test_a_cold_cache_is_probed_then_left_to_the_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(root)
    names = [f"m{i:03}.py" for i in range(COLD_PROBE + 8)]
    for i, name in enumerate(names):
        (root / name).write_text(CUDA_MODULE.replace("2", str(i)))
    fresh = run([root], RunConfig(jobs=1, cache=False))
    run([root / name for name in names[-5:]], RunConfig(jobs=1))  # only the last five are cached
    calls: list[bytes] = []
    original = PythonHandler.port

    def counting(self, data, selection, options):
        calls.append(data)
        return original(self, data, selection, options)

    monkeypatch.setattr(PythonHandler, "port", counting)
    result = run([root], RunConfig(jobs=1))
    assert len(calls) == len(names) - 5  # the probe gave up, and port_file still answered the five from the cache
    assert [(f.path, f.diff, f.new_bytes) for f in result.files] == [(f.path, f.diff, f.new_bytes) for f in fresh.files]
    calls.clear()
    (root / names[0]).write_text("x = 0\n")  # warm but for the first file: the probe goes on, nothing else is ported
    run([root], RunConfig(jobs=1))
    assert len(calls) == 1


def test_the_command_tunes_the_collector_of_its_own_process_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `ascend-port` process freezes what it has loaded (see cli/common.run_port); the app called in-process (by tests, by
    a program that embeds it) leaves the caller's collector alone."""
    import gc

    from typer.testing import CliRunner

    from ascend_port.cli import app

    (tmp_path / "train.py").write_text(CUDA_MODULE)
    _, err = _cli("apply", ".", "--dry-run", cwd=tmp_path)
    assert "GC True" in err
    before = gc.get_freeze_count()
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(app, ["apply", ".", "--dry-run"]).exit_code == 1
    assert gc.get_freeze_count() == before


def test_entries_are_written_privately_and_past_a_stale_temporary_file(monkeypatch: pytest.MonkeyPatch) -> None:
    import itertools
    import stat

    from ascend_port.run.cache import Entry, ResultCache

    results = ResultCache(cache_root(), b"config")
    key = "ab" * 32
    folder = Path(results._path(key)).parent
    folder.mkdir(parents=True)
    stale = folder / f".tmp-{os.getpid()}-7"  # left by a process that had this process ID before
    stale.write_bytes(b"old")
    monkeypatch.setattr(cache_module, "_TEMPORARY", itertools.count(7))
    results.store(key, Entry(diff_body=b"diff"))
    assert results.load(key).diff_body == b"diff"
    assert stale.read_bytes() == b"old" and sorted(p.name for p in folder.iterdir()) == [stale.name, key[2:]]
    assert stat.S_IMODE(os.stat(results._path(key)).st_mode) == 0o600
    other = "cd" * 32
    results.store(other, Entry())  # a new folder: made private
    assert stat.S_IMODE(os.stat(Path(results._path(other)).parent).st_mode) == 0o700


def test_cli_default_branch_is_the_workflows() -> None:
    from ascend_port.cli import DEFAULT_BRANCH
    from ascend_port.git.workflow import DEFAULT_BRANCH as WORKFLOW_DEFAULT

    assert DEFAULT_BRANCH == WORKFLOW_DEFAULT
