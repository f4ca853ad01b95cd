"""`ascend-port apply`: the port, on a new git branch (git/workflow.py), in place (--no-git), as a diff
(--dry-run) or as a check (--check)."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ascend_port.cli.common import (
    DEFAULT_BRANCH,
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_INTERRUPTED,
    AttentionOpt,
    ChangedSinceOpt,
    ColorOpt,
    ExcludeOpt,
    ExitZeroOpt,
    IgnoreOpt,
    JobsOpt,
    MinConfidenceOpt,
    NoCacheOpt,
    OtherDevicesOpt,
    PathsArg,
    QuietOpt,
    SelectOpt,
    Terminal,
    TorchNpuOpt,
    VerboseOpt,
    app,
    counted,
    findings_counts,
    make_config,
    note_run,
    report_errors,
    run_port,
    settings_for,
    totals_line,
)
from ascend_port.run import config as project_config
from ascend_port.run.engine import RunConfig, RunResult


@app.command()
def apply(
    paths: PathsArg,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the diff; write nothing.")] = False,
    no_git: Annotated[bool, typer.Option("--no-git", help="Write the port in place, without git.")] = False,
    interactive: Annotated[
        bool, typer.Option("--interactive", "-i", help="Review the port hunk by hunk (git add -p keys) before writing.")
    ] = False,
    branch: Annotated[
        str | None, typer.Option("--branch", help=f"Branch to create for the port (default {DEFAULT_BRANCH}).")
    ] = None,
    force_branch: Annotated[bool, typer.Option("--force-branch", help="Replace the branch if it exists.")] = False,
    no_commit: Annotated[
        bool, typer.Option("--no-commit", help="Stage the port on the branch; do not commit.")
    ] = False,
    allow_dirty: Annotated[
        bool,
        typer.Option("--allow-dirty", help="Run despite uncommitted changes (files with such changes are left out)."),
    ] = False,
    report_dir: Annotated[
        Path | None,
        typer.Option("--report-dir", help="Folder for per-file diffs and the summary (default: .ascend-port/)."),
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Write nothing; print a summary; exit 1 while the port would change files.")
    ] = False,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    min_confidence: MinConfidenceOpt = None,
    jobs: JobsOpt = 0,
    exclude: ExcludeOpt = None,
    exit_zero: ExitZeroOpt = False,
    attention_backend: AttentionOpt = None,
    other_devices: OtherDevicesOpt = None,
    changed_since: ChangedSinceOpt = None,
    no_cache: NoCacheOpt = False,
    torch_npu: TorchNpuOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    color: ColorOpt = "auto",
) -> None:
    """Port the files. In a git repository (the default): commit the port on a new branch, one commit per domain.
    --dry-run prints the diff; --no-git writes it in place; --check only says whether anything is left to port."""
    term = Terminal.for_flags(quiet, verbose, color, "porting")
    _check_apply_flags(
        term,
        dry_run,
        no_git,
        check,
        interactive,
        {
            "--branch": branch is not None,
            "--force-branch": force_branch,
            "--no-commit": no_commit,
            "--allow-dirty": allow_dirty,
            "--report-dir": report_dir is not None,
        },
    )
    flags = project_config.Flags(
        select, ignore, min_confidence, exclude, attention_backend, branch, other_devices, torch_npu
    )
    settings = settings_for(paths, flags, term, cached_rules=not no_cache)
    config = make_config(settings, jobs, term, no_cache)
    if not dry_run and not no_git and not check:
        raise typer.Exit(
            _apply_with_git(
                paths,
                dataclasses.replace(config, edits_across_files=False),  # the workflow makes them after its review
                changed_since,
                settings.branch or DEFAULT_BRANCH,
                force_branch,
                not no_commit,
                allow_dirty,
                report_dir,
                interactive,
                term,
            )
        )
    # After a review, the attention helpers go to their shared module only from the accepted files (never an
    # import of a module whose hunk was refused): the step runs then, on what was accepted.
    result = run_port(paths, dataclasses.replace(config, edits_across_files=not interactive), term, changed_since)
    if check:
        _check(result, dry_run, exit_zero, term)
    if dry_run:
        _print_diffs(result, term)
    else:
        _write_in_place(result, interactive, config, term)
    report_errors(result, term)
    _print_apply_summary(result, dry_run, term)
    if result.errors:
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(EXIT_FINDINGS if dry_run and result.changed and not exit_zero else EXIT_CLEAN)


def _print_apply_summary(result: RunResult, dry_run: bool, term: Terminal) -> None:
    """After `apply --dry-run` the totals; after writing in place every file written (as black does), then how many.
    The files that could not be written are errors, reported before."""
    if term.quiet:
        return
    if dry_run:
        term.err.print(totals_line(result) + " (dry run: nothing written)")
        return
    for file in result.changed:
        kinds = Counter(f.kind for f in file.findings)
        if file.accepted is None:
            counts = findings_counts(kinds["rewrite"], kinds["todo"])
        else:  # after a review: what was accepted of what the port proposed
            accepted = Counter(f.kind for f in file.accepted)
            counts = f"{accepted['rewrite']} of {counted(kinds['rewrite'], 'rewrite')} accepted, "
            counts += counted(accepted["todo"], "TODO")
        term.err.print(escape(f"ported {file.path} ({counts})"))
    term.err.print(totals_line(result, written=True))


def _check_apply_flags(
    term: Terminal, dry_run: bool, no_git: bool, check: bool, interactive: bool, git_flags: dict[str, bool]
) -> None:
    """Refuse contradictory `apply` flags before any work is done. ``git_flags``: each option of the git workflow,
    in the order the errors name them, with whether it was given."""
    git_only = [flag for flag, given in git_flags.items() if given]
    if (dry_run or no_git or check) and git_only:
        raise term.fail(
            f"{git_only[0]} is an option of the git workflow: it cannot be used with --dry-run, --no-git or --check"
        )
    if check and (no_git or interactive):
        raise term.fail(
            f"--check writes nothing: it cannot be combined with {'--no-git' if no_git else '--interactive'}"
        )
    if dry_run and interactive:
        raise term.fail("--interactive cannot be combined with --dry-run")


def _apply_with_git(
    paths: list[Path],
    config: RunConfig,
    changed_since: str | None,
    branch: str,
    force_branch: bool,
    commit: bool,
    allow_dirty: bool,
    report_dir: Path | None,
    interactive: bool,
    term: Terminal,
) -> int:
    """The default `apply`: port on a new branch of the repository. Returns the exit code (a workflow error's own
    code after printing it)."""
    from ascend_port.git.workflow import GitOptions, WorkflowError, apply_to_repository

    options = GitOptions(branch, force_branch, commit, allow_dirty, report_dir, interactive, term.quiet)
    try:
        return apply_to_repository(
            paths, config, options, lambda: run_port(paths, config, term, changed_since), term.out, term.err
        )
    except WorkflowError as error:
        term.error(escape(str(error)))
        return error.exit_code


def _print_diffs(result: RunResult, term: Terminal) -> None:
    """The unified diff of every file the port changes, as bytes: the files' own encodings and line endings. A file
    outside the working directory is shown relative to its repository's root (or else to the folder given), never
    as ``a//abs/path``, which ``git apply`` rejects; a note says where to apply it."""
    bases: set[str] = set()
    for file in result.changed:
        diff = file.diff
        if os.path.isabs(file.path):
            base = _diff_base(Path(file.path), result.roots)
            diff = _rebase_diff(diff, file.path, Path(file.path).relative_to(base).as_posix())
            bases.add(str(base))
        sys.stdout.buffer.write(diff)
    sys.stdout.buffer.flush()
    for shown in sorted(bases):
        term.err.print(
            f"note: paths in the diff are relative to {escape(shown)}: apply it there (git -C {escape(shown)} apply)",
            soft_wrap=True,
            highlight=False,
        )


def _diff_base(path: Path, roots: list[Path]) -> Path:
    """The root of the git work tree holding ``path``, else the given folder it is under (else its folder)."""
    for folder in path.parents:
        if (folder / ".git").exists():
            return folder
    return next((root for root in roots if path.is_relative_to(root)), path.parent)


def _rebase_diff(diff: bytes, old: str, new: str) -> bytes:
    """``diff`` with its ``---``/``+++`` paths ``old`` replaced by ``new`` (only in those two header lines)."""
    header, separator, body = diff.partition(b"\n@@")
    old_b, new_b = old.encode("utf-8", "surrogateescape"), new.encode("utf-8", "surrogateescape")
    header = header.replace(b"--- a/" + old_b, b"--- a/" + new_b, 1).replace(b"+++ b/" + old_b, b"+++ b/" + new_b, 1)
    return header + separator + body


def _write_in_place(result: RunResult, interactive: bool, config: RunConfig, term: Terminal) -> None:
    """`apply --no-git`: write the changed files (run/inplace.py), after the hunk review with --interactive."""
    from ascend_port.run.engine import edit_across_files
    from ascend_port.run.inplace import write_in_place

    if interactive:
        from ascend_port.git.review import review_in_place

        try:
            review_in_place(result, term.out)
        except KeyboardInterrupt:
            term.err.print("interrupted: nothing was written")
            raise typer.Exit(EXIT_INTERRUPTED) from None
        if config.edits_across_files:
            edit_across_files(result, config)
            note_run(result, term)
    writing = write_in_place(result)
    if writing.interrupted:
        _report_interrupted_writes(writing.written, writing.left, term)
        raise typer.Exit(EXIT_INTERRUPTED)


def _report_interrupted_writes(written: list[str], left: list[str], term: Terminal) -> None:
    term.err.print(
        f"interrupted: {counted(len(written), 'file')} ported, "
        f"{len(left)} left as {'they were' if len(left) != 1 else 'it was'} "
        "(run the same command again to port them; ported files are not changed twice)",
        soft_wrap=True,
        highlight=False,
    )
    for path in written:
        term.err.print(f"  ported: {escape(path)}", soft_wrap=True, highlight=False)


def _check(result: RunResult, show_diff: bool, exit_zero: bool, term: Terminal) -> None:
    """``apply --check``: the diff only with --dry-run, then one line per file left to port and the totals."""
    if show_diff:
        _print_diffs(result, term)
    for file in result.changed if not term.quiet else ():
        kinds = Counter(f.rewrites for f in file.findings if f.applied)
        term.err.print(f"would port {escape(file.path)} ({findings_counts(kinds[True], kinds[False])})", soft_wrap=True)
    report_errors(result, term)
    verdict = "not fully ported: run `ascend-port apply`" if result.changed else "fully ported"
    if not term.quiet:
        term.err.print(f"{totals_line(result)}; {verdict}", soft_wrap=True)
    if result.errors:
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(EXIT_FINDINGS if result.changed and not exit_zero else EXIT_CLEAN)
