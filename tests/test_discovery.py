"""Discovery and ignore rules (issue 15, part 4): ``.gitignore`` speaks only for the files of a git repository, so a
release tarball or an sdist is ported whole whatever ``.gitignore`` it ships (Open-Sora's ``datasets`` line dropped
its ``opensora/datasets/`` package), also when it is unpacked inside another repository; and whatever ignore rules
or ``--exclude`` leave out is listed on stderr and in the reports."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.run.discovery import Skipped, discover

CUDA = "import torch\n\nx = torch.ones(2).cuda()\n"
PACKAGE = {  # the shape of Open-Sora 2.0: a .gitignore line `datasets` and a package of that name
    ".gitignore": "__pycache__/\n*.log\ndatasets\n",
    "opensora/__init__.py": "",
    "opensora/datasets/__init__.py": "",
    "opensora/datasets/loader.py": CUDA,
    "opensora/models/model.py": CUDA,
}


@pytest.fixture(autouse=True)
def _plain_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git sees only what a test makes: no repository above tmp_path, no user or system configuration (a global
    excludes file would ignore files of its own)."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.chdir(tmp_path)


def git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(folder), *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def repository(root: Path, files: dict[str, str]) -> Path:
    tree(root, files)
    git(root, "init", "-q")
    for key, value in (("user.name", "Test"), ("user.email", "test@example.com"), ("commit.gpgsign", "false")):
        git(root, "config", key, value)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", "files")
    return root


def found(root: Path, exclude: tuple[str, ...] = ()) -> tuple[list[str], list[Skipped]]:
    skipped: list[Skipped] = []
    files = discover([root], lambda p: p.suffix == ".py", exclude, skipped)
    return sorted(p.relative_to(root).as_posix() for p in files), skipped


def scan(*args: str):
    return CliRunner().invoke(app, ["scan", *args], env={"NO_COLOR": "1", "COLUMNS": "200"}, catch_exceptions=False)


ALL = [
    "opensora/__init__.py",
    "opensora/datasets/__init__.py",
    "opensora/datasets/loader.py",
    "opensora/models/model.py",
]


def test_a_tree_that_is_no_repository_is_ported_whole_whatever_gitignore_it_ships(tmp_path: Path) -> None:
    root = tree(tmp_path / "Open-Sora-2.0", PACKAGE)  # an unpacked release tarball: no .git
    assert found(root) == (ALL, [])
    result = scan(str(root), "--format", "json", "--output", "report.json")
    assert "skipped" not in result.stderr
    assert "4 files checked, 2 to change" in result.stderr
    assert json.loads(Path("report.json").read_text())["skipped"] == []


@pytest.mark.parametrize("parent_ignores", ["", "datasets\n", "Open-Sora-2.0/\n", "*\n"])
def test_a_tree_unpacked_inside_an_unrelated_repository_is_ported_whole(tmp_path: Path, parent_ignores: str) -> None:
    """The parent repository (a home folder kept in git, a monorepo) never added the tree: neither its rules nor
    the tree's own .gitignore drop a file, whether the parent ignores the tree or only leaves it untracked."""
    parent = repository(tmp_path / "work", {".gitignore": parent_ignores or "*.log\n", "notes.txt": "mine\n"})
    root = tree(parent / "Open-Sora-2.0", PACKAGE)
    assert git(parent, "ls-files", "--", "Open-Sora-2.0") == ""
    assert found(root) == (ALL, [])
    assert "skipped" not in scan(str(root)).stderr


def test_a_repository_skips_what_it_ignores_and_says_so(tmp_path: Path) -> None:
    files = {
        ".gitignore": "datasets\n*.gen.py\n!keep.gen.py\n",
        "train.py": CUDA,
        "pkg/datasets/tracked.py": CUDA,  # added before the rule: git tracks it, so it is never ignored
    }
    root = repository(tmp_path / "project", files)
    git(root, "add", "-f", "pkg/datasets/tracked.py")
    git(root, "commit", "-q", "-m", "tracked")
    tree(root, {"pkg/datasets/new.py": CUDA, "out.gen.py": CUDA, "keep.gen.py": CUDA})
    files_found, skipped = found(root)
    assert files_found == ["keep.gen.py", "pkg/datasets/tracked.py", "train.py"]
    assert {(Path(s.path).relative_to(root).as_posix(), s.reason) for s in skipped} == {
        ("out.gen.py", f"ignored by git ({root / '.gitignore'}:2: *.gen.py)"),
        ("pkg/datasets/new.py", f"ignored by git ({root / '.gitignore'}:1: datasets)"),
    }
    # Named by a subfolder that the repository tracks files in, the rules still hold.
    assert found(root / "pkg") == (["datasets/tracked.py"], [skipped[-1]])

    result = scan("project", "--format", "json", "--output", "report.json")
    assert "2 files skipped (ignored by git): project/out.gen.py, project/pkg/datasets/new.py" in result.stderr
    report = json.loads(Path("report.json").read_text())
    assert {"path": "project/pkg/datasets/new.py", "reason": "ignored by git (project/.gitignore:1: datasets)"} in (
        report["skipped"]
    )
    assert report["summary"]["files_checked"] == 3
    scan("project", "--format", "md", "--output", "report.md")
    assert "- project/out.gen.py: ignored by git (project/.gitignore:2: \\*.gen.py)" in Path(
        "report.md"
    ).read_text() or (
        "- project/out.gen.py: ignored by git (project/.gitignore:2: *.gen.py)" in Path("report.md").read_text()
    )


def test_the_apply_reports_list_the_skipped_files(tmp_path: Path) -> None:
    root = repository(tmp_path / "project", {".gitignore": "generated/\n", "train.py": CUDA})
    tree(root, {"generated/model.py": CUDA})
    result = CliRunner().invoke(app, ["apply", str(root), "-j", "1"], env={"NO_COLOR": "1"}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "1 file skipped (ignored by git)" in result.stderr
    assessment = json.loads((root / ".ascend-port" / "ascend-port-npu" / "assessment.json").read_text())
    assert [s["path"] for s in assessment["skipped"]] == ["project/generated/model.py"]


def test_excluded_files_are_listed(tmp_path: Path) -> None:
    tree(tmp_path, {"train.py": CUDA, "vendored/lib.py": CUDA, "vendored/more.py": CUDA})
    assert found(tmp_path, ("vendored",)) == (
        ["train.py"],
        [Skipped(str(tmp_path / "vendored" / name), "exclude", "vendored") for name in ("lib.py", "more.py")],
    )
    result = scan(".", "--exclude", "vendored", "--format", "json", "--output", "report.json")
    assert "2 files skipped (excluded): vendored/lib.py, vendored/more.py" in result.stderr
    assert json.loads(Path("report.json").read_text())["skipped"] == [
        {"path": "vendored/lib.py", "reason": "excluded by 'vendored'"},
        {"path": "vendored/more.py", "reason": "excluded by 'vendored'"},
    ]


def test_a_long_list_is_cut_on_stderr_but_whole_in_the_report(tmp_path: Path) -> None:
    names = [f"gen/m{i}.py" for i in range(8)]
    repository(tmp_path, {".gitignore": "gen/\n", "train.py": CUDA})
    tree(tmp_path, dict.fromkeys(names, CUDA))
    result = scan(".", "--format", "json", "--output", "report.json")
    shown = ", ".join(names[:5])
    assert f"8 files skipped (ignored by git): {shown} and 3 more (all in the JSON report" in result.stderr
    assert [s["path"] for s in json.loads(Path("report.json").read_text())["skipped"]] == names


def test_a_submodule_does_not_turn_the_rules_off(tmp_path: Path) -> None:
    """``git check-ignore`` stops at the first path inside a submodule: the submodule is asked itself."""
    library = repository(tmp_path / "library", {"lib.py": CUDA, ".gitignore": "local_*.py\n"})
    root = repository(tmp_path / "project", {"train.py": CUDA})
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "third_party/library")
    (root / ".git" / "info" / "exclude").write_text("scratch.py\n")
    tree(root, {"scratch.py": CUDA, "third_party/library/local_try.py": CUDA, "zz_last.py": CUDA})
    files_found, skipped = found(root)
    assert files_found == ["third_party/library/lib.py", "train.py", "zz_last.py"]
    assert sorted(Path(s.path).relative_to(root).as_posix() for s in skipped) == [
        "scratch.py",
        "third_party/library/local_try.py",
    ]
