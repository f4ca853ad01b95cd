"""``apply --interactive``: review the port hunk by hunk with ``git add -p``'s keys, before anything is written.

Every decision is made in memory; the result of a file is the old bytes with the accepted hunks applied. An
accepted rewrite needs ``import torch_npu``, so its import hunk is pulled in even when it was refused; an accepted
edit that removes a name a refused hunk still uses (an import removal, a flash-attn gate) is dropped (git/names.py
checks the names, as pyflakes would); a file whose accepted hunks would not parse is left unchanged (with a
message). On a terminal a key is read without
Enter; otherwise one answer per line, so a review can be scripted (``printf 'y\\nn\\n' | ascend-port apply -i``).
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import shlex
import subprocess
import tempfile
import warnings
from dataclasses import dataclass, field

from rich.console import Console
from rich.text import Text

from ascend_port.core.findings import Finding
from ascend_port.git.answers import Keys, keys_for
from ascend_port.git.names import new_undefined_names
from ascend_port.rules.registry import written_definitions
from ascend_port.run.hunks import FileChange, LineEdit, apply_edits, split_lines

HELP = """\
y - apply this hunk
n - do not apply this hunk
q - quit: do not apply this hunk or any undecided one (what was decided is kept)
a - apply this hunk and all later undecided hunks in this file
d - do not apply this hunk or any later undecided hunk in this file
j - leave this hunk undecided, see the next undecided hunk
J - leave this hunk undecided, see the next hunk
k - leave this hunk undecided, see the previous undecided hunk
K - leave this hunk undecided, see the previous hunk
g - go to a hunk
/ - search for a hunk matching a regular expression
s - split this hunk into smaller hunks
e - edit this hunk in $EDITOR
? - print this help"""

EDIT_HELP = b"""# ---
# Edit the hunk above, then save and quit the editor.
# To keep an old line that is removed, change its '-' into a space.
# To leave out an added line, delete it. You may also add '+' lines.
# Lines starting with a space are context: leave them as they are.
# Lines starting with '#' are ignored. Delete everything to cancel.
"""


# --- the review model -----------------------------------------------------------------------------------------


@dataclass
class Hunk:
    file: FileChange
    change_ids: tuple[int, ...]
    decision: bool | None = None
    edit: LineEdit | None = None

    @property
    def old_start(self) -> int:
        return self.file.changes[self.change_ids[0]].old_start

    @property
    def old_end(self) -> int:
        return self.file.changes[self.change_ids[-1]].old_end

    @property
    def findings(self) -> list[Finding]:
        return [f for i in self.change_ids for f in self.file.findings_of[i]]

    def needs_import(self) -> bool:
        """Accepted code that references the NPU (every rewrite does, and so do the attention helpers, a hunk with
        no finding of its own) needs ``import torch_npu``."""
        return (
            self.edit is not None
            or any(f.rewrites and not f.rule.serves_others for f in self.findings)
            or any(tag == b"+" and _USES_TORCH_NPU.search(line) for tag, line in self.lines()[2])
        )

    def lines(self) -> tuple[int, int, list[tuple[bytes, bytes]]]:
        if self.edit is None:
            return self.file.hunk_lines(self.change_ids)
        old = self.file.old_lines[self.edit.start : self.edit.end]
        return self.edit.start, -1, [(b"-", line) for line in old] + [(b"+", line) for line in self.edit.lines]

    def text(self) -> str:
        return "".join(tag.decode() + line.decode("utf-8", "replace") for tag, line in self.lines()[2])


@dataclass
class Reviewed:
    """A file after review: the accepted edits (each with the findings behind it) and the resulting bytes."""

    file: FileChange
    units: list[tuple[LineEdit, list[Finding]]] = field(default_factory=list)
    new: bytes | None = None  # None: nothing accepted, or the result would not parse
    accepted: int = 0
    total: int = 0


def parses(path: str, data: bytes) -> str | None:
    """None when ``data`` is valid for its file type (Python, JSON and notebooks, TOML, YAML), else the reason."""
    name = path.rsplit("/", 1)[-1]
    try:
        if name.endswith(".py"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(data)
        elif name.endswith((".json", ".ipynb")):
            json.loads(data)
        elif name.endswith(".toml"):
            import tomlkit

            tomlkit.parse(data.decode("utf-8"))
        elif name.endswith((".yaml", ".yml")):
            from ruamel.yaml import YAML

            list(YAML(typ="safe", pure=True).load_all(data))
    except Exception as error:
        line = getattr(error, "lineno", None)
        return f"line {line}: {getattr(error, 'msg', error)}" if line else f"{type(error).__name__}: {error}"
    return None


def breaks(path: str, old: bytes, new: bytes) -> str | None:
    """Why ``new`` is invalid when ``old`` was valid (a file the tool could not check before is not judged)."""
    problem = parses(path, new)
    return problem if problem and parses(path, old) is None else None


def _decide_undecided(hunks: list[Hunk], decision: bool) -> None:
    """Give ``decision`` to each of ``hunks`` not decided yet (a, d and q leave earlier answers alone)."""
    for hunk in hunks:
        if hunk.decision is None:
            hunk.decision = decision


# --- the session ----------------------------------------------------------------------------------------------


class Review:
    def __init__(self, files: list[FileChange], console: Console, keys: Keys) -> None:
        self.files = files
        self.console = console
        self.keys = keys
        self.quit = False

    def run(self) -> list[Reviewed]:
        results = []
        for file in self.files:
            hunks = [Hunk(file, group) for group in file.groups()]
            if self.quit:
                for hunk in hunks:
                    hunk.decision = False
            else:
                self._review_file(file, hunks)
            results.append(self._result(file, hunks))
        return results

    # One file: git add -p's loop. y/n/a/d decide and move to the next undecided hunk (wrapping); the file is
    # done when every hunk is decided.
    def _review_file(self, file: FileChange, hunks: list[Hunk]) -> None:
        index = 0
        while any(h.decision is None for h in hunks):
            self._show(file, hunks, index)
            options = self._options(hunks, index)
            answer = self.keys.key(f"({index + 1}/{len(hunks)}) Apply this hunk to {file.path} [{','.join(options)}]? ")
            if answer is None:
                answer = "q"
            if answer == "":
                continue
            if answer not in options:
                self._say(self._refusal(answer), "red")
                continue
            if answer == "q":
                self.quit = True
                _decide_undecided(hunks, False)
                return
            if answer not in "ynade":
                index = self._browse(file, hunks, index, answer)
                continue
            if self._decide(file, hunks, index, answer):
                following = [i for i in range(index + 1, len(hunks)) if hunks[i].decision is None]
                earlier = [i for i in range(index) if hunks[i].decision is None]
                index = (following or earlier or [index])[0]

    def _decide(self, file: FileChange, hunks: list[Hunk], index: int, answer: str) -> bool:
        """Carry out y, n, a, d or e on hunk ``index``; False when the hunk is still undecided (an edit given up)."""
        hunk = hunks[index]
        if answer in "ad":
            _decide_undecided(hunks[index + 1 :], answer == "a")
            hunk.decision = answer == "a"
        elif answer == "e":
            self._edit(file, hunks, index)
        else:
            hunk.decision = answer == "y"
        return hunk.decision is not None

    def _browse(self, file: FileChange, hunks: list[Hunk], index: int, answer: str) -> int:
        """Carry out a key that decides nothing (move, go to, search, split, help): the hunk to show next."""
        if answer in "jJkK":
            return self._move(hunks, index, answer)
        if answer == "g":
            return self._goto(hunks, index)
        if answer == "/":
            return self._search(hunks, index)
        if answer == "s":
            parts = [Hunk(file, (i,)) for i in hunks[index].change_ids]
            hunks[index : index + 1] = parts
            self._say(f"Split into {len(parts)} hunks.")
        else:
            self._say(HELP, "red")
        return index

    def _options(self, hunks: list[Hunk], index: int) -> list[str]:
        options = ["y", "n", "q", "a", "d"]
        if any(h.decision is None for h in hunks[index + 1 :]):
            options.append("j")
        if index + 1 < len(hunks):
            options.append("J")
        if any(h.decision is None for h in hunks[:index]):
            options.append("k")
        if index > 0:
            options.append("K")
        if len(hunks) > 1:
            options += ["g", "/"]
        if len(hunks[index].change_ids) > 1 and hunks[index].edit is None:
            options.append("s")
        return [*options, "e", "?"]

    @staticmethod
    def _refusal(answer: str) -> str:
        return {
            "j": "No next undecided hunk",
            "J": "No next hunk",
            "k": "No previous undecided hunk",
            "K": "No previous hunk",
            "g": "No other hunks to go to",
            "/": "No other hunks to search",
            "s": "Sorry, cannot split this hunk",
        }.get(answer, f"Unknown key {answer!r}: ? prints the help")

    @staticmethod
    def _move(hunks: list[Hunk], index: int, answer: str) -> int:
        if answer == "J":
            return index + 1
        if answer == "K":
            return index - 1
        if answer == "j":
            return next(i for i in range(index + 1, len(hunks)) if hunks[i].decision is None)
        return next(i for i in range(index - 1, -1, -1) if hunks[i].decision is None)

    def _goto(self, hunks: list[Hunk], index: int) -> int:
        for i, hunk in enumerate(hunks):
            mark = {None: " ", True: "+", False: "-"}[hunk.decision]
            first = next((line for tag, line in hunk.lines()[2] if tag != b" "), b"")
            self.console.print(
                f"{mark}{i + 1:3}: -{hunk.old_start + 1} {first.decode('utf-8', 'replace').rstrip()[:60]}", markup=False
            )
        answer = self.keys.line("go to which hunk? ")
        try:
            target = int((answer or "").strip())
        except ValueError:
            self._say(f"Invalid number: {answer!r}", "red")
            return index
        if not 1 <= target <= len(hunks):
            self._say(f"Sorry, only {len(hunks)} hunks available.", "red")
            return index
        return target - 1

    def _search(self, hunks: list[Hunk], index: int) -> int:
        answer = self.keys.line("search for regex? ")
        try:
            pattern = re.compile(answer or "")
        except re.error as error:
            self._say(f"Malformed search regexp {answer!r}: {error}", "red")
            return index
        for step in range(1, len(hunks) + 1):
            candidate = (index + step) % len(hunks)
            if pattern.search(hunks[candidate].text()):
                return candidate
        self._say("No hunk matches the given pattern", "red")
        return index

    # --- e: edit in $EDITOR ---

    def _edit(self, file: FileChange, hunks: list[Hunk], index: int) -> None:
        hunk = hunks[index]
        if hunk.edit is not None:
            self._say("This hunk was already edited: keep it with y or skip it with n.", "red")
            return
        text = file.hunk_text(hunk.change_ids)
        start, _, lines = file.hunk_lines(hunk.change_ids)
        shown_old = [line for tag, line in lines if tag != b"+"]
        low = max((h.old_end if h.edit is None else h.edit.end for h in hunks[:index]), default=0)
        high = min(
            (h.old_start if h.edit is None else h.edit.start for h in hunks[index + 1 :]), default=len(file.old_lines)
        )
        content = f"# Hunk {index + 1} of {file.path}\n".encode() + text + EDIT_HELP
        while True:
            edited = self._run_editor(content)
            if edited is None:
                return
            try:
                parsed = parse_edited_hunk(edited)
                if parsed is None:
                    self._say("Edit cancelled: the hunk is left undecided.")
                    return
                edit = _edit_of_hunk(parsed, shown_old, start, (low, high), len(file.old_lines))
            except ValueError as error:
                self._say(f"Your edit does not apply: {error}", "red")
                again = self.keys.key("Edit again? [y,n] ")
                if again != "y":
                    return
                content = edited
                continue
            if not edit.lines and edit.start == edit.end:
                hunk.decision = False
                self._say("The edited hunk changes nothing: it is skipped.")
            else:
                hunk.edit, hunk.decision = edit, True
            return

    def _run_editor(self, content: bytes) -> bytes | None:
        editor = os.environ.get("EDITOR") or os.environ.get("VISUAL") or "vi"
        handle, name = tempfile.mkstemp(prefix="ascend-port-hunk-", suffix=".diff")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(content)
            try:
                status = subprocess.run([*shlex.split(editor), name]).returncode
            except OSError as error:
                self._say(f"cannot run the editor {editor!r}: {error.strerror or error}", "red")
                return None
            if status != 0:
                self._say(f"the editor {editor!r} exited with status {status}: the hunk is left undecided", "red")
                return None
            with open(name, "rb") as stream:
                return stream.read()
        finally:
            os.unlink(name)

    # --- output ---

    def _say(self, message: str, style: str | None = None) -> None:
        self.console.print(message, style=style, markup=False, highlight=False, soft_wrap=True)  # (never hard-wrapped)

    def _show(self, file: FileChange, hunks: list[Hunk], index: int) -> None:
        hunk = hunks[index]
        title = Text(f"{file.path}", style="bold")
        title.append(f"  hunk {index + 1}/{len(hunks)}" + ("  (edited)" if hunk.edit else ""), style="dim")
        self.console.print(title)
        for finding in sorted(hunk.findings, key=lambda f: (f.line, f.rule.id)):
            colour = {"high": "green", "medium": "yellow", "low": "red"}[finding.confidence.label]
            line = Text(f"  {finding.rule.id} ", style="bold")
            line.append(finding.confidence.label, style=colour)
            line.append(f"  {finding.rule.name}: {finding.message}")
            self.console.print(line, soft_wrap=True)
        if hunk.edit is None:
            header, *_ = file.hunk_text(hunk.change_ids).split(b"\n", 1)
            self.console.print(Text(header.decode(), style="cyan"))
        body = Text()
        for tag, data in hunk.lines()[2]:
            body.append(
                tag.decode() + data.decode("utf-8", "replace").rstrip("\r\n") + "\n",
                style={b"-": "red", b"+": "green"}.get(tag),
            )
            if not data.endswith(b"\n"):
                body.append("\\ No newline at end of file\n", style="dim")
        self.console.print(body, end="", soft_wrap=True)

    # --- the result ---

    def _result(self, file: FileChange, hunks: list[Hunk]) -> Reviewed:
        reviewed = Reviewed(file, total=len(hunks), accepted=sum(1 for h in hunks if h.decision))
        reviewed.units = self._accepted_units(file, hunks)
        if not reviewed.units:
            return reviewed
        new = apply_edits(file.old_lines, [edit for edit, _ in reviewed.units])
        problem = breaks(file.path, file.old, new)
        if not problem and file.path.endswith(".py"):
            new, problem = self._keep_names_defined(file, reviewed)
        if problem:
            self._say(
                f"{file.path}: the accepted hunks do not give valid code ({problem}); the file is left unchanged.",
                "red",
            )
            reviewed.units = []
            return reviewed
        reviewed.new = new if new != file.old else None
        return reviewed

    def _keep_names_defined(self, file: FileChange, reviewed: Reviewed) -> tuple[bytes, str | None]:
        """Drop each accepted edit that removes the binding of a name the result still reads (an import removal
        or a ``HAS_FLASH_ATTN`` gate whose call rewrite was refused), until every name is defined again: the
        edits that depend on each other go together. The result, or why no such result exists."""
        while True:
            new = apply_edits(file.old_lines, [edit for edit, _ in reviewed.units])
            missing = new_undefined_names(file.old, new, file.new)
            if not missing:
                return new, None
            words = [re.compile(rb"\b%s\b" % re.escape(name.encode())) for name in sorted(missing)]
            dropped = [
                (edit, findings)
                for edit, findings in reviewed.units
                if any(
                    w.search(b"".join(file.old_lines[edit.start : edit.end])) and not w.search(b"".join(edit.lines))
                    for w in words
                )
            ]
            if not dropped:
                return new, f"undefined name{'s' if len(missing) > 1 else ''}: {', '.join(sorted(missing))}"
            for edit, _ in dropped:
                self._say(
                    f"{file.path}: line {edit.start + 1} is kept as it was: it defines {', '.join(sorted(missing))}, "
                    "which a refused hunk still uses."
                )
            reviewed.units = [unit for unit in reviewed.units if unit not in dropped]
            if not reviewed.units:
                return file.old, None

    def _accepted_units(self, file: FileChange, hunks: list[Hunk]) -> list[tuple[LineEdit, list[Finding]]]:
        """The accepted edits with their findings: the tool's changes in file order, then the user's edits."""
        accepted_changes = {i for h in hunks if h.decision and h.edit is None for i in h.change_ids}
        edited = [h for h in hunks if h.decision and h.edit is not None]
        if any(h.decision and h.needs_import() for h in hunks):
            self._pull_in_import(file, accepted_changes, edited)
        self._pull_in_helpers(file, accepted_changes, edited)
        units = [(file.edits((i,))[0], list(file.findings_of[i])) for i in sorted(accepted_changes)]
        for hunk in edited:
            assert hunk.edit is not None
            units.append((hunk.edit, hunk.findings))
        return units

    def _pull_in_import(self, file: FileChange, accepted_changes: set[int], edited: list[Hunk]) -> None:
        """Add to ``accepted_changes`` each ``import torch_npu`` change that neither it nor an edit covers."""
        for i, change in enumerate(file.changes):
            needed = any(f.rule.serves_others for f in file.findings_of[i])
            covered = i in accepted_changes or any(
                h.edit.start <= change.old_start < h.edit.end for h in edited if h.edit is not None
            )
            if needed and not covered:
                accepted_changes.add(i)
                self._say(f"{file.path}: `import torch_npu` is applied too: the accepted rewrites need it.")

    def _pull_in_helpers(self, file: FileChange, accepted_changes: set[int], edited: list[Hunk]) -> None:
        """Add to ``accepted_changes`` the change that defines a helper an accepted change calls (the port writes
        the attention helpers into the module, core/porting.ProjectStep.definitions; after the review,
        rules/attention/shared.py moves the accepted ones to the project's shared module, so an import can never
        point at a refused one)."""
        helpers = _helpers()
        added = [b"".join(file.new_lines[c.new_start : c.new_end]) for c in file.changes]
        defines = {name: i for i, text in enumerate(added) for name in _HELPER_DEF.findall(text) if name in helpers}
        if not defines:
            return
        texts = [added[i] for i in accepted_changes] + [b"".join(h.edit.lines) for h in edited if h.edit is not None]
        called = {name for text in texts for name in _HELPER_CALL.findall(text)} & defines.keys()
        for name in sorted(called):
            if defines[name] not in accepted_changes:
                accepted_changes.add(defines[name])
                self._say(f"{file.path}: the helper {name.decode()} is applied too: the accepted rewrites call it.")
        for name in sorted(called):
            for dependency in helpers[name]:
                accepted_changes.add(defines.get(dependency, defines[name]))


_USES_TORCH_NPU = re.compile(rb"\btorch_npu\.")
_HELPER_DEF = re.compile(rb"^def (\w+)\(", re.MULTILINE)
_HELPER_CALL = re.compile(rb"\b(\w+)\(")


@functools.cache
def _helpers() -> dict[bytes, tuple[bytes, ...]]:
    """The functions the port writes into ported files (rules.registry.written_definitions), each with those it
    calls."""
    return {name.encode(): tuple(n.encode() for n in needs) for name, needs in written_definitions().items()}


def parse_edited_hunk(data: bytes) -> tuple[list[bytes], list[bytes]] | None:
    """The old and new sides of an edited hunk; None when the user emptied it (cancel)."""
    old: list[bytes] = []
    new: list[bytes] = []
    last = b""
    body = [line for line in split_lines(data) if not line.startswith((b"#", b"@@"))]
    if not any(line.strip() for line in body):
        return None
    for number, line in enumerate(body, 1):
        if line.startswith(b"\\"):  # "\ No newline at end of file": the line before has none
            if last in (b" ", b"-") and old:
                old[-1] = old[-1].rstrip(b"\n")
            if last in (b" ", b"+") and new:
                new[-1] = new[-1].rstrip(b"\n")
            continue
        if not line.endswith(b"\n"):
            line += b"\n"
        tag, text = line[:1], line[1:]
        if line in (b"\n", b"\r\n"):  # editors drop the space of an empty context line
            tag, text = b" ", line
        if tag == b" ":
            old.append(text)
            new.append(text)
        elif tag == b"-":
            old.append(text)
        elif tag == b"+":
            new.append(text)
        else:
            raise ValueError(f"line {number} starts with {tag!r}: every line must start with ' ', '-' or '+'")
        last = tag
    return old, new


def _edit_of_hunk(
    parsed: tuple[list[bytes], list[bytes]], shown_old: list[bytes], start: int, free: tuple[int, int], file_length: int
) -> LineEdit:
    """The edit an edited hunk makes: its old and new sides less the lines they share at both ends.

    ``shown_old`` is the old side the user was shown (starting at line ``start``), ``free`` the lines no other hunk
    touches and ``file_length`` the number of lines of the file; ValueError says why the edit cannot be applied.
    """
    old, new = parsed
    if old != shown_old:
        raise ValueError(
            "the context and '-' lines no longer match the file "
            "(only '+' lines may be added or deleted, '-' lines turned into context)"
        )
    prefix, suffix = _common_ends(old, new)
    edit = LineEdit(start + prefix, start + len(old) - suffix, tuple(new[prefix : len(new) - suffix]))
    low, high = free
    if edit.start < low or edit.end > high:
        raise ValueError("the edit changes lines that belong to another hunk")
    if any(not line.endswith(b"\n") for line in edit.lines[:-1]) or (
        edit.lines and not edit.lines[-1].endswith(b"\n") and edit.end < file_length
    ):
        raise ValueError("only the last line of the file may end without a newline")
    return edit


def _common_ends(old: list[bytes], new: list[bytes]) -> tuple[int, int]:
    """How many lines ``old`` and ``new`` share at their start, then (not overlapping it) at their end."""
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    return prefix, suffix


def review_files(files: list[FileChange], console: Console, keys: Keys | None = None) -> list[Reviewed]:
    """Review ``files`` and return what was accepted in each, in the same order."""
    return Review(files, console, keys or keys_for(console)).run()


def review_in_place(result, console: Console, keys: Keys | None = None) -> None:
    """``--no-git --interactive``: keep only the accepted part of each changed file of an engine ``RunResult``."""
    pending = []
    for file in result.changed:
        try:
            old = open(file.path, "rb").read()
        except OSError as error:
            file.error, file.new_bytes = f"cannot read: {error.strerror or error}", None
            continue
        pending.append((file, FileChange(file.path, old, file.new_bytes, file.findings)))
    for (file, _), outcome in zip(pending, review_files([change for _, change in pending], console, keys)):
        file.new_bytes = outcome.new
        file.accepted = [finding for _, findings in outcome.units for finding in findings]
