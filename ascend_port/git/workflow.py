"""``ascend-port apply PATH`` on a git repository: the port is committed on a new branch, one commit per rule
domain, and the user's own branch and files are never touched.

The order is what makes it safe: refuse early (not a repository, a merge or rebase in progress, uncommitted
changes, an existing branch); port every file in memory; review it (``--interactive``); only then create the
branch, write and commit. That last part is a transaction: if anything fails or the user presses Ctrl-C, HEAD,
the index, every written file and the branch are put back as they were, so the user is either on the original
branch with an unchanged tree or on the new branch with the complete port, never in between.
"""

from __future__ import annotations

import functools
import signal
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import git
from rich.console import Console
from rich.markup import escape

from ascend_port import __version__
from ascend_port.core.catalogue import Rule
from ascend_port.core.findings import FileResult
from ascend_port.core.interrupts import DeferredInterrupt, test_sigint
from ascend_port.core.sources import SourceError, decode_python, read_only, write_atomic
from ascend_port.git.answers import Keys
from ascend_port.git.domains import ORDER, TITLES, FilePlan, Step, port_steps, unit_steps
from ascend_port.git.review import review_files
from ascend_port.git.summary import BEFORE_REVIEW, RunInfo, exclude_from_git, write_report
from ascend_port.reports import write_assessment
from ascend_port.run.engine import RunConfig, RunResult, display_path, planned_edits
from ascend_port.run.hunks import FileChange

DEFAULT_BRANCH = "ascend-port/npu"
REPORT_DIR = ".ascend-port"  # at the repository's root, a folder per branch (branch_folder)
EXIT_ERROR, EXIT_INTERRUPTED = 2, 130

# (file in the git directory, what is going on, how to get out of it)
IN_PROGRESS = (
    ("MERGE_HEAD", "a merge", "git merge --abort"),
    ("rebase-merge", "a rebase", "git rebase --abort"),
    ("rebase-apply", "a rebase or `git am`", "git rebase --abort / git am --abort"),
    ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick --abort"),
    ("REVERT_HEAD", "a revert", "git revert --abort"),
    ("BISECT_LOG", "a bisect", "git bisect reset"),
)


class WorkflowError(Exception):
    """A refusal or a failure; the message says what happened and what to do."""

    def __init__(self, message: str, exit_code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class GitOptions:
    branch: str = DEFAULT_BRANCH
    force_branch: bool = False
    commit: bool = True
    allow_dirty: bool = False
    report_dir: Path | None = None
    interactive: bool = False
    quiet: bool = False  # -q: errors only, as `git commit -q`


@dataclass
class RepoState:
    root: Path
    branch: str | None  # None: detached HEAD
    head: str
    dirty: set[str] = field(default_factory=set)
    replaced: str | None = None  # --force-branch: the tip of the branch it replaces

    @property
    def base(self) -> str:
        return self.branch or self.head[:12]


def write_file(path: Path, data: bytes) -> None:
    """The one place the git workflow writes a ported file (the tests make it fail part-way)."""
    write_atomic(path, data)


# --- before anything is done ------------------------------------------------------------------------------------


def open_repository(paths: list[Path]) -> git.Repo:
    for path in paths:
        if not path.exists():
            raise WorkflowError(f"no such file or directory: {path}")
    first = paths[0].resolve()
    try:
        repo = git.Repo(first if first.is_dir() else first.parent, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise WorkflowError(
            f"{paths[0]} is not in a git repository. Pass --no-git to write the port in place without git, or "
            "put the project under git first (git init && git add -A && git commit -m 'before the port')."
        ) from None
    if repo.bare or repo.working_tree_dir is None:
        raise WorkflowError(f"{paths[0]} is in a bare repository: port a checkout, or pass --no-git")
    root = Path(repo.working_tree_dir).resolve()
    for path in paths:
        if not path.resolve().is_relative_to(root):
            raise WorkflowError(f"{path} is outside the repository at {root}: port one repository at a time")
    repo.git.update_environment(GIT_LITERAL_PATHSPECS="1")  # file names are names, never glob patterns
    return repo


def _exists(repo: git.Repo, ref: str) -> str | None:
    try:
        return repo.git.rev_parse("--verify", "--quiet", ref)
    except git.GitCommandError:
        return None


def _dirty_paths(repo: git.Repo) -> set[str]:
    """Tracked paths with uncommitted changes (staged or not), relative to the root."""
    entries = repo.git.status("--porcelain=v1", "-z", "--untracked-files=no").split("\0")
    paths: set[str] = set()
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        paths.add(entry[3:])
        if "R" in entry[:2] or "C" in entry[:2]:  # a rename or copy: the next entry is its source
            paths.add(entries[i])
            i += 1
    return paths


def preflight(repo: git.Repo, options: GitOptions) -> RepoState:
    root = Path(repo.working_tree_dir or ".").resolve()
    git_dir = Path(repo.git_dir)
    for name, what, way_out in IN_PROGRESS:
        if (git_dir / name).exists():
            raise WorkflowError(
                f"{what} is in progress in {root}: finish or abort it first ({way_out}), then run the port again"
            )
    if (git_dir / "index.lock").exists():
        raise WorkflowError(
            f"another git command seems to be running ({git_dir / 'index.lock'} exists); "
            "if none is, delete that file and run the port again"
        )
    if not repo.head.is_valid():
        raise WorkflowError(
            "the repository has no commit yet: commit the project first "
            "(git add -A && git commit -m 'before the port'), or pass --no-git"
        )
    try:
        repo.git.check_ref_format("--branch", options.branch)
    except git.GitCommandError:
        raise WorkflowError(f"--branch: {options.branch!r} is not a valid branch name") from None
    branch = None if repo.head.is_detached else repo.head.ref.name
    if _exists(repo, f"refs/heads/{options.branch}"):
        if not options.force_branch:
            raise WorkflowError(
                f"branch {options.branch} already exists (from an earlier port?). Pass --branch NAME to use "
                f"another name, --force-branch to replace it, or delete it: git branch -D {options.branch}"
            )
        if options.branch == branch:
            raise WorkflowError(
                f"you are on {branch}, the branch the port would replace: switch to the branch "
                "you want to port (e.g. git switch main) and run again"
            )
        _refuse_foreign_commits(repo, options.branch)
    dirty = _dirty_paths(repo)
    if dirty and not options.allow_dirty:
        shown = ", ".join(sorted(dirty)[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        raise WorkflowError(
            f"the working tree has uncommitted changes ({shown}). Commit or stash them first (git stash), or "
            "pass --allow-dirty to port anyway: files with uncommitted changes are then left out of the port"
        )
    if options.commit:
        try:
            repo.git.var("GIT_AUTHOR_IDENT")
            repo.git.var("GIT_COMMITTER_IDENT")
        except git.GitCommandError:
            raise WorkflowError(
                "git does not know who you are, so the port cannot be committed: set it with "
                "git config --global user.name 'Your Name' and user.email, or pass --no-commit"
            ) from None
    replaced = _exists(repo, f"refs/heads/{options.branch}")
    return RepoState(root, branch, repo.head.commit.hexsha, dirty, replaced)


# Every commit of the port says so in its message (commit_message): how --force-branch tells its own commits.
MADE_BY = "Made by ascend-port "


def _refuse_foreign_commits(repo: git.Repo, branch: str) -> None:
    """--force-branch replaces an earlier port, never work of the user's: like ``git push --force-with-lease``,
    it refuses when the branch holds a commit (not on HEAD) whose message ascend-port did not write."""
    log = repo.git.log("-z", "--format=%H%x00%B", f"HEAD..refs/heads/{branch}")
    fields = log.split("\0") if log else []
    foreign = [(sha.strip(), body) for sha, body in zip(fields[::2], fields[1::2]) if MADE_BY not in body]
    if not foreign:
        return
    tip = repo.git.rev_parse(f"refs/heads/{branch}")
    shown = ", ".join(f"{sha[:12]} {body.splitlines()[0] if body else ''}".strip() for sha, body in foreign[:3])
    more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
    raise WorkflowError(
        f"--force-branch: branch {branch} holds {len(foreign)} commit{'s' if len(foreign) != 1 else ''} "
        f"ascend-port did not make ({shown}{more}); it is not replaced. Keep them on another branch "
        f"(git branch {branch}-kept {tip[:12]}) or delete the branch yourself (git branch -D {branch}), "
        "then run again, or pass --branch NAME to port on another branch"
    )


def plan_files(
    repo: git.Repo,
    state: RepoState,
    result: RunResult,
    options: GitOptions,
) -> tuple[list[FilePlan], list[tuple[str, str]]]:
    """The changed files the branch will get, and the ones left out with the reason."""
    tracked = set(repo.git.ls_files("-z").split("\0"))
    plans: list[FilePlan] = []
    left_out: list[tuple[str, str]] = []
    for file in result.changed:
        shown = Path(file.path)
        target = shown.resolve()
        if file.path in result.created or any(m.path == target for edit in result.edits for m in edit.modules):
            continue  # a module of an edit across files: planned by _edit_across_files, after the review
        try:
            path = target.relative_to(state.root).as_posix()
        except ValueError:
            left_out.append((file.path, "outside the repository (through a symbolic link)"))
            continue
        if shown.is_symlink():
            left_out.append((path, "a symbolic link (port the file it points to)"))
        elif path not in tracked:
            left_out.append((path, "not tracked by git"))
        elif path in state.dirty:
            left_out.append((path, "has uncommitted changes"))
        elif read_only(target):  # refused as black and ruff refuse it: an error, the other files go on
            file.error, file.new_bytes = "cannot write: Permission denied (the file is read-only)", None
        else:
            assert file.new_bytes is not None
            plans.append(FilePlan(path, target, target.read_bytes(), file.new_bytes, file.findings))
    untracked = [path for path, why in left_out if why == "not tracked by git"]
    if untracked and not options.allow_dirty:
        shown_paths = ", ".join(untracked[:5]) + (f" and {len(untracked) - 5} more" if len(untracked) > 5 else "")
        raise WorkflowError(
            f"the port would change files git does not track ({shown_paths}): commit them first "
            "(git add ... && git commit), or pass --allow-dirty to leave them out"
        )
    return sorted(plans, key=lambda plan: plan.path), left_out


# --- the transaction ----------------------------------------------------------------------------------------------


@dataclass
class Commit:
    sha: str
    subject: str


class Transaction:
    """Branch, write, stage and commit, with everything needed to undo it."""

    def __init__(self, repo: git.Repo, state: RepoState, options: GitOptions) -> None:
        self.repo, self.state, self.options = repo, state, options
        self.ref = f"refs/heads/{options.branch}"
        self.index = self._git_path("index")
        self.index_backup = self.index.read_bytes() if self.index.exists() else None
        self.branch_before = _exists(repo, self.ref)
        # Locks that appear during the transaction can only be left by our own git children, stopped by Ctrl-C.
        self.locks = [
            p
            for p in (self._git_path("index.lock"), self._git_path("HEAD.lock"), self._git_path(f"{self.ref}.lock"))
            if not p.exists()
        ]
        self.branched = False
        self.originals: dict[Path, bytes] = {}
        self.created: set[Path] = set()

    def _git_path(self, name: str) -> Path:
        return self.state.root / self.repo.git.rev_parse("--git-path", name)

    def begin(self) -> None:
        # `git branch` then `symbolic-ref`, not `git switch`: HEAD is the same commit, so nothing in the tree or
        # the index needs to change, and nothing does.
        self.branched = True
        force = ["--force"] if self.options.force_branch else []
        self.repo.git.branch(*force, "--no-track", self.options.branch, self.state.head)
        self.repo.git.symbolic_ref("-m", f"ascend-port: switch to {self.options.branch}", "HEAD", self.ref)

    def write(self, plan: FilePlan, data: bytes) -> None:
        if plan.target not in self.originals and not plan.target.exists():
            # A file the port creates (the shared attention helpers): the undo deletes it.
            self.created.add(plan.target)
            with open(plan.target, "xb") as handle:
                handle.write(data)
            return
        if plan.target not in self.created:
            self.originals.setdefault(plan.target, plan.old)
        write_file(plan.target, data)

    def stage(self, paths: list[str], message: str | None) -> Commit | None:
        with tempfile.TemporaryDirectory(prefix="ascend-port-") as tmp:
            spec = Path(tmp, "paths")
            spec.write_bytes(b"\0".join(p.encode("utf-8", "surrogateescape") for p in paths))
            self.repo.git.add("--pathspec-from-file", str(spec), "--pathspec-file-nul")
            if message is None:
                return None
            message_file = Path(tmp, "message")
            message_file.write_text(message, "utf-8")
            # Only these paths (anything else the user staged stays staged); --no-verify: the user's pre-commit
            # hooks (formatters) must not rewrite the port behind the reviewer's back.
            self.repo.git.commit(
                "--quiet",
                "--no-verify",
                "--file",
                str(message_file),
                "--pathspec-from-file",
                str(spec),
                "--pathspec-file-nul",
            )
        return Commit(self.repo.head.commit.hexsha, message.splitlines()[0])

    def rollback(self) -> list[str]:
        """Put HEAD, the index, the files and the branch back; returns what could not be restored."""
        problems: list[str] = []

        def attempt(what: str, action: Callable[[], object]) -> None:
            try:
                action()
            except Exception as error:
                problems.append(f"{what}: {error}")

        saved = None
        if threading.current_thread() is threading.main_thread():
            saved = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not stop the undo
        try:
            for lock in self.locks:
                attempt(f"remove {lock}", functools.partial(lock.unlink, missing_ok=True))
            if self.branched:
                if self.state.branch:
                    attempt(
                        "put HEAD back",
                        lambda: self.repo.git.symbolic_ref(
                            "-m", "ascend-port: undo", "HEAD", f"refs/heads/{self.state.branch}"
                        ),
                    )
                else:
                    attempt("put HEAD back", lambda: self.repo.git.update_ref("--no-deref", "HEAD", self.state.head))
            if self.index_backup is not None:
                attempt("restore the index", lambda: write_atomic(self.index, self.index_backup or b""))
            for target, data in self.originals.items():
                attempt(f"restore {target}", functools.partial(write_atomic, target, data))
            for target in self.created:
                attempt(f"remove {target}", functools.partial(target.unlink, missing_ok=True))
            if self.branched:
                if self.branch_before:
                    attempt(
                        f"restore {self.options.branch}", lambda: self.repo.git.update_ref(self.ref, self.branch_before)
                    )
                elif _exists(self.repo, self.ref):
                    attempt(f"delete {self.options.branch}", lambda: self.repo.git.update_ref("-d", self.ref))
        finally:
            if saved is not None:
                signal.signal(signal.SIGINT, saved)
        return problems


def commit_message(prefix: str, batch: list[tuple[FilePlan, Step]], target: str = "") -> str:
    counts: Counter[str] = Counter()
    rules: dict[str, Rule] = {}
    for _, step in batch:
        counts.update(step.counts)
        rules.update(step.rules)
    files = sorted(plan.path for plan, _ in batch)
    plural = "s" if len(files) != 1 else ""
    lines = [
        f"ascend-port: {TITLES[prefix]} ({prefix}xx) in {len(files)} file{plural}",
        "",
        "Rules (number of changes):",
    ]
    lines += [f"  {rid} {rules[rid].name} [{rules[rid].confidence.label}]: {counts[rid]}" for rid in sorted(counts)]
    lines += ["", "Files:"] + [f"  {path}" for path in files]
    made = f"{MADE_BY}{__version__}" + (f" for torch_npu {target}" if target else "")
    lines += ["", f"{made}; `ascend-port explain <rule>` documents each rule."]
    return "\n".join(lines) + "\n"


def run_transaction(
    repo: git.Repo, state: RepoState, plans: list[FilePlan], options: GitOptions, target: str = ""
) -> list[Commit]:
    tx = Transaction(repo, state, options)
    interrupt = DeferredInterrupt()
    commits: list[Commit] = []
    try:
        with interrupt:
            tx.begin()
            interrupt.check()
            if options.commit:
                for prefix in ORDER:
                    batch = [(plan, step) for plan in plans for step in plan.steps if step.prefix == prefix]
                    if not batch:
                        continue
                    for plan, step in batch:
                        tx.write(plan, step.data)
                        interrupt.check()
                    commit = tx.stage([plan.path for plan, _ in batch], commit_message(prefix, batch, target))
                    assert commit is not None
                    commits.append(commit)
                    interrupt.check()
            else:
                for plan in plans:
                    tx.write(plan, plan.new)
                    interrupt.check()
                tx.stage([plan.path for plan in plans], None)
                interrupt.check()
    except BaseException as error:
        problems = tx.rollback()
        where = f"you are on {state.base} with your files as they were"
        if problems:
            where = (
                "the undo did not finish: "
                + "; ".join(problems)
                + f". Check `git status`, then `git switch {state.base}`"
            )
        if isinstance(error, KeyboardInterrupt) or interrupt.fired:
            raise WorkflowError(f"interrupted: the port was undone; {where}", EXIT_INTERRUPTED) from None
        reason = git_said(error) if isinstance(error, git.GitCommandError) else f"{type(error).__name__}: {error}"
        outcome = f"It was undone: {where}" if not problems else f"{where[0].upper()}{where[1:]}"
        raise WorkflowError(f"writing the port failed: {reason.rstrip('.')}. {outcome}") from None
    return commits


def branch_folder(branch: str) -> str:
    """The report folder of a branch under REPORT_DIR: its name, `/` made `-` (`ascend-port/npu`: `ascend-port-npu`),
    so that each branch keeps its own report."""
    return branch.replace("/", "-")


def git_said(error: git.GitCommandError) -> str:
    """A failed git command in one line: its name and what git wrote, as git wrote it (GitPython wraps it in
    `stderr: '...'` with its blank lines)."""
    said = (error.stderr or "").strip()
    if said.startswith("stderr: '") and said.endswith("'"):
        said = said[len("stderr: '") : -1]
    words = [str(part) for part in error.command[:2]] if isinstance(error.command, list) else ["git"]
    text = " ".join(line.strip() for line in said.splitlines() if line.strip())
    return f"{' '.join(words)}: {text or f'exit code {error.status}'}"


# --- the command --------------------------------------------------------------------------------------------------


def _review(
    plans: list[FilePlan],
    config: RunConfig,
    console: Console,
    keys: Keys | None,
) -> tuple[list[FilePlan], str]:
    changes = [FileChange(plan.path, plan.old, plan.new, plan.findings) for plan in plans]
    reviewed = review_files(changes, console, keys)
    kept = []
    for plan, outcome in zip(plans, reviewed):
        if outcome.new is None:
            continue
        if outcome.new == plan.new:
            plan.steps = port_steps(plan, config.selection, config.options)
        else:
            plan.new = outcome.new
            plan.findings = [f for _, findings in outcome.units for f in findings]
            plan.steps = unit_steps(plan, outcome.units)
        kept.append(plan)
    accepted = sum(r.accepted for r in reviewed)
    return kept, f"{accepted} of {sum(r.total for r in reviewed)} hunks accepted"


def _edit_across_files(
    plans: list[FilePlan], result: RunResult, state: RepoState, config: RunConfig, err: Console
) -> list[FilePlan]:
    """The project steps' edits across the planned (after a review: the accepted) files (core/porting.ProjectStep
    .plan: the attention helpers written once per package): every step of a file they rewrite uses the modules they
    write, which are committed with the domain of their rules. ``result`` and the per-file diffs of the report
    follow."""
    edits = result.edits
    if not edits:
        texts = []
        for plan in plans:
            try:
                texts.append((plan.target, decode_python(plan.new).text))
            except SourceError:
                continue
        planned, notes = planned_edits(texts, config.options, result.roots)
        edits.extend(planned)
        for note in notes:
            err.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False)
    by_path = {str(Path(f.path).resolve()): f for f in result.changed}
    modules = []
    for edit in edits:
        for plan in plans:
            plan.new = edit.rewrite(plan.target, plan.new)
            for step in plan.steps:
                step.data = edit.rewrite(plan.target, step.data)
            if (file := by_path.get(str(plan.target))) is not None and file.new_bytes is not None:
                file.new_bytes = plan.new
        for module in edit.modules:
            data = module.text.encode("utf-8")
            old = module.path.read_bytes() if module.existing else b""
            if old == data:
                continue
            shown = display_path(module.path)
            if not module.existing and all(f.path != shown for f in result.files):
                result.files.append(FileResult(shown, new_bytes=data))
                result.created.add(shown)
            path = module.path.relative_to(state.root).as_posix()  # (beside files of the repository: inside it)
            modules.append(FilePlan(path, module.path, old, data, [], [Step(edit.domain, data, Counter())]))
    return sorted([*plans, *modules], key=lambda plan: plan.path)


def apply_to_repository(
    paths: list[Path],
    config: RunConfig,
    options: GitOptions,
    run_port: Callable[[], RunResult],
    out: Console,
    err: Console,
    keys: Keys | None = None,
) -> int:
    """The whole git workflow; returns the exit code. Raises WorkflowError for refusals and failures."""
    repo = open_repository(paths)
    state = preflight(repo, options)
    folder = (options.report_dir or state.root / REPORT_DIR / branch_folder(options.branch)).resolve()
    if folder.is_relative_to(state.root) and repo.git.ls_files("-z", "--", folder.as_posix()):
        raise WorkflowError(
            f"the report folder {folder} holds files tracked by git: choose a folder of its own with --report-dir"
        )
    try:
        result = run_port()
        plans, left_out = plan_files(repo, state, result, options)
        reviewed = ""
        if options.interactive and plans:
            plans, reviewed = _review(plans, config, out, keys)
        else:
            for plan in plans:
                plan.steps = port_steps(plan, config.selection, config.options)
        plans = _edit_across_files(plans, result, state, config, err)
    except KeyboardInterrupt:
        raise WorkflowError("interrupted: nothing was written", EXIT_INTERRUPTED) from None
    for path, why in left_out:
        err.print(f"[yellow]left out:[/yellow] {escape(path)}: {why}", highlight=False)
    for file in result.errors:
        err.print(f"[red]error:[/red] {escape(file.path)}: {escape(file.error or '')}", highlight=False)
    status = EXIT_ERROR if result.errors else 0
    if not plans:
        out.print(
            "Nothing to port: no change was accepted."
            if options.interactive and reviewed
            else "Nothing to port: no file needs a change. No branch was created."
        )
        return status

    commits = run_transaction(repo, state, plans, options, result.target)
    if not options.quiet:  # where the user now is, as git says it
        switched = "Switched to and reset branch" if state.replaced else "Switched to a new branch"
        err.print(f"{switched} '{options.branch}'", markup=False, highlight=False, soft_wrap=True)
    if state.replaced and not options.quiet:
        err.print(
            f"note: branch {options.branch} was replaced; its old tip was {state.replaced[:12]} "
            f"(to get it back: git branch {options.branch}-old {state.replaced[:12]})",
            highlight=False,
            soft_wrap=True,
        )

    # The port is complete from here on; the report is a by-product and its failure only a warning.
    info = RunInfo(
        f"{state.base} at {state.head[:12]}",
        options.branch,
        [(c.sha[:12], c.subject) for c in commits],
        options.commit,
        left_out,
        reviewed,
        result.target,
    )
    interrupted = _write_reports(repo, state, folder, plans, result, info, err, options.quiet)
    if not options.quiet:
        _print_outcome(out, state, options, plans, commits, folder)
    return EXIT_INTERRUPTED if interrupted else status


def _write_reports(
    repo: git.Repo,
    state: RepoState,
    folder: Path,
    plans: list[FilePlan],
    result: RunResult,
    info: RunInfo,
    err: Console,
    quiet: bool = False,
) -> bool:
    """The per-file diffs, the summary and the assessment, after the commits. They take a while on a large
    project, so the user is told (unless quiet), and Ctrl-C skips them (the port is committed already); True when
    it did."""
    if not quiet:
        err.print(
            f"Writing the report to {escape(_shown(folder, state.root))} (Ctrl-C skips it: the port is committed)...",
            highlight=False,
            soft_wrap=True,
        )
    try:
        # (the folder of all branches' reports, where the default puts this one)
        kept_out = state.root / REPORT_DIR if folder.parent == (state.root / REPORT_DIR).resolve() else folder
        exclude_from_git(state.root / repo.git.rev_parse("--git-path", "info/exclude"), state.root, kept_out)
        test_sigint("report")
        write_report(folder, plans, result.errors, info)
        # The same assessment `scan --format md|json|sarif|csv` prints, for the whole run: after a review, that is
        # not what was committed, and it goes in a folder whose name says so.
        whole = folder / BEFORE_REVIEW if info.reviewed else folder
        write_assessment(result, whole, old={str(plan.target): plan.old for plan in plans})
    except (OSError, git.GitCommandError) as error:
        err.print(f"[yellow]warning:[/yellow] the report could not be written to {folder}: {error}")
    except KeyboardInterrupt:
        err.print(
            f"interrupted: the report was skipped ({escape(str(folder))} may be incomplete); "
            "the port is committed, as below",
            highlight=False,
            soft_wrap=True,
        )
        return True
    return False


def _shown(folder: Path, root: Path) -> str:
    """The report folder as the user reads it: relative to the repository's root where it is inside."""
    try:
        return folder.relative_to(root).as_posix()
    except ValueError:
        return folder.as_posix()


def _print_outcome(
    out: Console, state: RepoState, options: GitOptions, plans: list[FilePlan], commits: list[Commit], folder: Path
) -> None:
    branch, base = options.branch, state.base
    back = f"git switch {base}" if state.branch else f"git switch --detach {base}"
    shown_folder = _shown(folder, state.root)
    files = f"{len(plans)} file{'s' if len(plans) != 1 else ''}"
    if options.commit:
        lines = [
            f"Ported {files} on branch {branch} (from {base} at {state.head[:12]}), "
            f"{len(commits)} commit{'s' if len(commits) != 1 else ''}:"
        ]
        lines += [f"  {commit.sha[:12]} {commit.subject}" for commit in commits]
        lines += [
            f"Per-file diffs and summary: {shown_folder}/",
            f"Compare:  git diff {base}...{branch}",
            f"Drop it:  {back} && git branch -D {branch}",
        ]
    else:
        lines = [
            f"The port of {files} is staged on branch {branch} (from {base} at {state.head[:12]}), not committed.",
            f"Per-file diffs and summary: {shown_folder}/",
            "Review:   git diff --cached",
            f"Commit:   git commit -m 'Port to Ascend NPU (ascend-port {__version__})'",
            f"Drop it:  git restore --staged --worktree --pathspec-from-file={shown_folder}/files.txt "
            f"&& {back} && git branch -D {branch}   (from the repository root)",
        ]
    for line in lines:  # never wrapped: these are commands to copy
        out.print(line, markup=False, highlight=False, soft_wrap=True)
