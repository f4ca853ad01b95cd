"""``apply --interactive``: the review session (scripted answers), through piped input on the command line, and
through a pseudo-terminal with single keypresses."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pexpect
import pytest
from gitrepo import DIST_ONLY_PORTED, TRAIN, editor_script, fake_domains, git, invoke, make_repo, private_cache, state
from rich.console import Console

from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.git.answers import LineKeys
from ascend_port.git.review import Review, parse_edited_hunk
from ascend_port.port.handlers import handler_for
from ascend_port.run.hunks import FileChange

__all__ = ["fake_domains", "private_cache"]

pytestmark = pytest.mark.usefixtures("private_cache")

SRC = """\
import torch

a = torch.ones(1).cuda()
b = 1
c = 2
d = 3
e = 4
f = 5
g = 6
h = 7
torch.cuda.synchronize()
if x.is_cuda:
    pass
i = 1
j = 2
k = 3
l = 4
m = 5
n = 6
o = 7
torch.cuda.memory_usage()
"""
# Its hunks: 1 = `import torch_npu` + `.cuda()` (two changes, splittable), 2 = synchronize/is_cuda, 3 = a TODO.
NPU_LINE = "a = torch.ones(1).npu()\n"
SYNC_LINE = "torch.npu.synchronize()\n"
IMPORT_LINE = "import torch_npu\n"
TODO_MARK = "# TODO(ascend-port): NPU107"


def ported(text: str = SRC, name: str = "x.py") -> FileChange:
    outcome = handler_for(Path(name)).port(text.encode(), Selection(), PortOptions())
    assert outcome.new_text is not None
    return FileChange(name, text.encode(), outcome.new_text.encode(), outcome.findings)


def review(answers: str, *files: FileChange) -> tuple[list[bytes | None], str]:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, color_system=None)
    results = Review(list(files or [ported()]), console, LineKeys(console, io.StringIO(answers))).run()
    return [r.new for r in results], buffer.getvalue()


def text(data: bytes | None) -> str:
    return (data or b"").decode()


# --- the session ------------------------------------------------------------------------------------------------


def test_yes_to_everything_is_the_port_and_no_is_nothing() -> None:
    change = ported()
    assert review("y\ny\ny\n", change)[0] == [change.new]
    assert review("n\nn\nn\n", change)[0] == [None]


def test_prompt_shows_file_rules_confidence_and_diff() -> None:
    _, output = review("q\n")
    assert "x.py  hunk 1/3" in output
    assert "NPU100 high  import-torch-npu: import torch_npu added" in output
    assert "NPU101 high  cuda-method: .cuda() -> .npu()" in output
    assert "-a = torch.ones(1).cuda()\n+a = torch.ones(1).npu()" in output
    assert "(1/3) Apply this hunk to x.py [y,n,q,a,d,j,J,g,/,s,e,?]? q" in output


def test_quit_keeps_what_was_decided() -> None:
    (new,), _ = review("n\ny\nq\n")
    assert SYNC_LINE in text(new) and NPU_LINE not in text(new) and TODO_MARK not in text(new)


def test_end_of_input_is_quit() -> None:
    (new,), _ = review("n\ny\n")
    assert SYNC_LINE in text(new) and TODO_MARK not in text(new)


def test_accepted_rewrite_pulls_in_the_import() -> None:
    (new,), output = review("n\ny\nn\n")  # the import hunk refused, the synchronize rewrite accepted
    assert text(new).startswith("import torch\nimport torch_npu\n")
    assert "`import torch_npu` is applied too" in output


def test_split_applies_one_part_of_a_hunk() -> None:
    (new,), output = review("s\ny\nn\nn\nn\n")  # split hunk 1; the import only
    assert "Split into 2 hunks." in output
    assert text(new) == SRC.replace("import torch\n", "import torch\n" + IMPORT_LINE)
    (new,), _ = review("s\nn\ny\nn\nn\n")  # the .cuda() rewrite only: its import comes with it
    assert text(new) == SRC.replace("import torch\n", "import torch\n" + IMPORT_LINE).replace(
        "a = torch.ones(1).cuda()\n", NPU_LINE
    )


def test_a_todo_alone_needs_no_import() -> None:
    (new,), output = review("n\nn\ny\n")
    assert TODO_MARK in text(new) and IMPORT_LINE not in text(new)
    assert "applied too" not in output


def test_a_and_d_decide_the_rest_of_the_file_only() -> None:
    other = ported("import torch\ny = torch.ones(1).cuda()\n", "y.py")
    (x, y), _ = review("n\na\ny\n", ported(), other)
    assert SYNC_LINE in text(x) and TODO_MARK in text(x) and NPU_LINE not in text(x)
    assert text(y) == other.new.decode()
    (x, y), _ = review("y\nd\ny\n", ported(), other)
    assert NPU_LINE in text(x) and SYNC_LINE not in text(x) and text(y) == other.new.decode()


def test_moving_around_with_j_k_J_K() -> None:
    # As in git: after an answer the review goes to the next undecided hunk, wrapping around at the end.
    # 1 -J-> 2: y -> 3 -K-> 2: n (changes its answer) -> 3: y -> 1: K is refused, n.
    (new,), output = review("J\ny\nK\nn\ny\nK\nn\n")
    assert "No previous hunk" in output
    assert TODO_MARK in text(new) and SYNC_LINE not in text(new) and NPU_LINE not in text(new)
    # 1 -j-> 2 -j-> 3 -k-> 2: y -> 3: n -> 1: n
    (new,), output = review("j\nj\nk\ny\nn\nn\n")
    assert SYNC_LINE in text(new) and NPU_LINE not in text(new) and TODO_MARK not in text(new)
    assert "(3/3) Apply this hunk to x.py [y,n,q,a,d,k,K,g,/,e,?]? k" in output


def test_go_to_and_search() -> None:
    (new,), output = review("g\n3\ny\nn\nn\n")
    assert "go to which hunk? 3" in output and TODO_MARK in text(new) and SYNC_LINE not in text(new)
    (new,), _ = review("g3\ny\nn\nn\n")  # the argument on the same line
    assert TODO_MARK in text(new)
    (new,), output = review("/is_cuda\ny\nn\nn\n")
    assert SYNC_LINE in text(new) and NPU_LINE not in text(new)
    _, output = review("/nothing-like-this\nq\n")
    assert "No hunk matches the given pattern" in output
    _, output = review("g\n9\nq\n")
    assert "Sorry, only 3 hunks available." in output


def test_help_and_unknown_keys() -> None:
    _, output = review("?\nx\nq\n")
    assert "s - split this hunk into smaller hunks" in output and "Unknown key 'x'" in output


def test_edit_a_hunk_in_the_editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv(
        "EDITOR",
        editor_script(
            tmp_path,
            (
                "data = open(path).read().replace('+a = torch.ones(1).npu()', '+a = torch.ones(1).npu(0)')\n"
                "open(path, 'w').write(data)\n"
            ),
        ),
    )
    (new,), _ = review("e\nn\nn\n")
    assert "a = torch.ones(1).npu(0)\n" in text(new) and IMPORT_LINE in text(new)


def test_an_edit_that_does_not_apply_can_be_redone_or_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv(
        "EDITOR",
        editor_script(
            tmp_path,
            (
                "data = open(path).read().replace(' b = 1', ' b = 100')\n"  # changes a context line
                "open(path, 'w').write(data)\n"
            ),
        ),
    )
    (new,), output = review("e\nn\ny\nn\nn\n")
    assert "Your edit does not apply" in output and "Edit again? [y,n]" in output
    assert NPU_LINE in text(new) and "b = 1\n" in text(new)


def test_emptied_edit_cancels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", editor_script(tmp_path, "open(path, 'w').write('')\n"))
    (new,), output = review("e\nn\nn\nn\n")
    assert "Edit cancelled" in output and new is None


def test_a_result_that_does_not_parse_leaves_the_file_unchanged() -> None:
    change = FileChange("t.py", b"x = (1,\n     2,\n     3)\n", b"x = [1,\n     2,\n     3]\n")
    (new,), output = review("s\ny\nn\n", change)
    assert new is None and "do not give valid code (line" in output
    assert review("y\n", change)[0] == [change.new]


def test_other_file_types_are_checked_too() -> None:
    change = FileChange("c.json", b"[1,\n 2,\n 3]\n", b"[[1,\n 2,\n 3]]\n")
    (new,), output = review("s\ny\nn\n", change)
    assert new is None and "c.json: the accepted hunks do not give valid code" in output
    assert review("y\n", change)[0] == [change.new]


def test_parse_edited_hunk() -> None:
    old, new = parse_edited_hunk(b"# comment\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n\n c\n\\ No newline at end of file\n")
    assert old == [b"a\n", b"b\n", b"\n", b"c"] and new == [b"a\n", b"B\n", b"\n", b"c"]
    assert parse_edited_hunk(b"# only comments\n") is None
    with pytest.raises(ValueError, match="line 1"):
        parse_edited_hunk(b"*a\n")


# --- the command line, input piped -------------------------------------------------------------------------------


@pytest.mark.usefixtures("fake_domains")
def test_piped_yes_to_everything_equals_the_plain_run(tmp_path: Path) -> None:
    plain = make_repo(tmp_path / "plain")
    reviewed = make_repo(tmp_path / "reviewed")
    assert invoke(str(plain), "-j", "1").exit_code == 0
    result = invoke(str(reviewed), "-j", "1", "--interactive", input="y\n" * 50)
    assert result.exit_code == 0, result.output
    log = ["log", "--format=%s%n%b", "main..ascend-port/npu"]
    assert git(reviewed, *log) == git(plain, *log)
    assert git(reviewed, "rev-parse", "HEAD^{tree}") == git(plain, "rev-parse", "HEAD^{tree}")
    assert "Apply this hunk to train.py" in result.output


@pytest.mark.usefixtures("fake_domains")
def test_piped_no_to_everything_changes_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    before = state(repo)
    result = invoke(str(repo), "-j", "1", "-i", input="n\n" * 50)
    assert result.exit_code == 0 and "Nothing to port: no change was accepted." in result.output
    assert state(repo) == before


@pytest.mark.usefixtures("fake_domains")
def test_piped_partial_review_commits_the_accepted_hunks_per_domain(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    # pkg/dist_only.py: its one hunk (import + call): y. train.py has one hunk of five changes: split it, then
    # import n, .cuda() n, fake_dist_call y (its import is pulled in), kernel TODO n, synchronize n.
    result = invoke(str(repo), "-j", "1", "-i", input="y\ns\nn\nn\ny\nn\nn\n")
    assert result.exit_code == 0, result.output
    assert "Split into 5 hunks." in result.output
    assert (repo / "pkg/dist_only.py").read_text() == DIST_ONLY_PORTED
    expected = TRAIN.replace("import torch\n", "import torch\nimport torch_npu\n").replace(
        "fake_dist_call", "fake_hccl_call"
    )
    assert (repo / "train.py").read_text() == expected
    # train.py's pulled-in import goes with the device layer, its call with its domain; dist_only.py was
    # accepted whole, so it is committed as without the review (its import comes with its only domain).
    shas = git(repo, "log", "--reverse", "--format=%H", "main..HEAD").splitlines()
    assert [git(repo, "log", "-1", "--format=%s", sha) for sha in shas] == [
        "ascend-port: device layer (NPU1xx) in 1 file",
        "ascend-port: distributed (NPU2xx) in 2 files",
    ]
    assert git(repo, "show", f"{shas[0]}:train.py") + "\n" == TRAIN.replace(
        "import torch\n", "import torch\nimport torch_npu\n"
    )
    assert "NPU298 test-dist-call [high]: 2" in git(repo, "log", "-1", "--format=%B", shas[1])
    report = repo / ".ascend-port" / "ascend-port-npu"
    summary = (report / "summary.md").read_text()
    assert "Interactive review: 2 of 6 hunks accepted." in summary
    # the folder describes what was committed; the assessment of the whole port says so by where it is (issue 32)
    assert not (report / "assessment.md").exists() and not (report / "change_list.csv").exists()
    assert (report / "before-review" / "assessment.md").is_file()
    assert "before-review/" in summary and "the full port, before the review" in summary


@pytest.mark.usefixtures("fake_domains")
def test_piped_review_without_git(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "train.py").write_text(TRAIN)
    other = tmp_path / "other"
    other.mkdir()
    (other / "train.py").write_text(TRAIN)
    assert invoke(str(other), "-j", "1", "--no-git").exit_code == 0
    result = invoke(str(folder), "-j", "1", "--no-git", "-i", input="y\n" * 20)
    assert result.exit_code == 0, result.output
    assert (folder / "train.py").read_bytes() == (other / "train.py").read_bytes()
    (folder / "train.py").write_text(TRAIN)
    assert invoke(str(folder), "-j", "1", "--no-git", "-i", input="n\n" * 20).exit_code == 0
    assert (folder / "train.py").read_text() == TRAIN


# --- a real terminal ------------------------------------------------------------------------------------------


class Terminal:
    """The command in a pseudo-terminal; a failed expectation shows everything the command printed."""

    def __init__(self, repo: Path, *args: str, **env: str) -> None:
        environment = {**os.environ, "TERM": "xterm", "COLUMNS": "200", **env}
        environment.pop("VISUAL", None)
        self.child = pexpect.spawn(
            sys.executable,
            ["-c", "from ascend_port.cli import main; main()", "apply", str(repo), "-j", "1", *args],
            env=environment,
            encoding="utf-8",
            timeout=60,
            dimensions=(50, 200),
        )
        self.transcript = io.StringIO()
        self.child.logfile_read = self.transcript

    def expect(self, text: str) -> None:
        try:
            self.child.expect_exact(text)
        except (pexpect.EOF, pexpect.TIMEOUT) as error:
            raise AssertionError(
                f"{text!r} not seen ({type(error).__name__}); the terminal showed:\n{self.transcript.getvalue()}"
            ) from None

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def finish(self) -> int:
        self.child.expect(pexpect.EOF)
        self.child.close()
        return self.child.exitstatus


def spawn(repo: Path, *args: str, **env: str) -> Terminal:
    return Terminal(repo, *args, **env)


PORTED_SRC = ported().new.decode()


def test_terminal_single_keys_without_enter(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"x.py": SRC})
    child = spawn(repo, "--interactive")
    child.expect("Apply this hunk to x.py")
    child.expect("]? ")
    child.send("?")  # no Enter: a single keypress is an answer
    child.expect("s - split this hunk into smaller hunks")
    child.expect("(1/3) Apply this hunk to x.py")
    child.send("y")
    child.expect("(2/3) Apply this hunk to x.py")
    child.send("n")
    child.expect("(3/3) Apply this hunk to x.py")
    child.send("y")
    child.expect("Compare:")
    assert child.finish() == 0
    assert git(repo, "symbolic-ref", "--short", "HEAD") == "ascend-port/npu"
    content = (repo / "x.py").read_text()
    assert NPU_LINE in content and IMPORT_LINE in content and TODO_MARK in content and SYNC_LINE not in content


def test_terminal_edit_and_quit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"x.py": SRC})
    editor = editor_script(
        tmp_path,
        (
            "data = open(path).read().replace('+a = torch.ones(1).npu()', '+a = torch.ones(1).npu(1)')\n"
            "open(path, 'w').write(data)\n"
        ),
    )
    child = spawn(repo, "-i", EDITOR=editor)
    child.expect("(1/3) Apply this hunk to x.py")
    child.send("e")
    child.expect("(2/3) Apply this hunk to x.py")
    child.send("q")
    assert child.finish() == 0
    content = (repo / "x.py").read_text()
    assert "a = torch.ones(1).npu(1)\n" in content and SYNC_LINE not in content


def test_terminal_ctrl_c_during_review_changes_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"x.py": SRC})
    before = state(repo)
    child = spawn(repo, "-i")
    child.expect("(1/3) Apply this hunk to x.py")
    child.send("y")
    child.expect("(2/3) Apply this hunk to x.py")
    child.child.sendintr()
    child.expect("interrupted: nothing was written")
    assert child.finish() == 130
    assert state(repo) == before


def test_terminal_review_without_git(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "x.py").write_text(SRC)
    child = spawn(folder, "--no-git", "-i")
    for number in (1, 2, 3):
        child.expect(f"({number}/3) Apply this hunk to")
        child.send("y")
    assert child.finish() == 0
    assert (folder / "x.py").read_text() == PORTED_SRC


def test_counts_after_a_review_in_place_are_what_was_accepted(tmp_path: Path) -> None:
    """`--no-git -i` printed the whole port's counts when one hunk was accepted (issue 32): the per-file line and
    the totals count the accepted rewrites, out of the port's."""
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "m.py").write_text(
        "import torch\n\nx = torch.ones(1).cuda()\n" + "\n" * 12 + "y = torch.zeros(1).cuda()\n"
    )
    result = invoke(str(folder), "-j", "1", "--no-git", "-i", input="y\nn\n" + "n\n" * 10)
    assert result.exit_code == 0, result.output
    assert (folder / "m.py").read_text().count(".npu()") == 1
    lines = [line for line in result.stderr.splitlines() if "ported" in line]
    assert lines[-2].endswith("(2 of 3 rewrites accepted, 0 TODOs)"), lines
    assert lines[-1] == "1 file ported (1 checked): 2 rewrites, 0 TODOs", lines


def test_a_read_only_file_is_not_counted_as_ported(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    for name in ("a.py", "b.py"):
        (folder / name).write_text("import torch\n\nx = torch.ones(1).cuda()\n")
    (folder / "b.py").chmod(0o444)
    result = invoke(str(folder), "-j", "1", "--no-git")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == "1 file ported (2 checked): 2 rewrites, 0 TODOs, 1 file with errors"
