"""``ascend-port error``: what a CANN / ACL / HCCL / torch_npu error means and what to do, from a code or a log.

The table is package data, ``ascend_port/data/cann_errors.json`` (written by ``scripts/extract_cann_errors.py``):
``{"version": 1, "entries": [...]}``, each entry

- ``id``: unique (``acl-507035``, ``cann-EZ9999``, ``oom-tried-to-allocate``...);
- ``kind``: ``acl`` (ACL runtime return codes 1xxxxx-5xxxxx), ``cann`` (CANN's E* codes), ``aclnn`` (operator API
  codes and messages), ``not-supported``, ``oom``, ``hccl``, ``device`` (a kernel's hardware exception),
  ``torch_npu`` (its ``ERRxxxxx`` tags), ``environment``;
- ``code`` (or null) and ``name``: what ``ascend-port error CODE`` looks up;
- ``pattern``: a regular expression that finds the entry in a log; ``example``: a line from the source it matches;
- ``tier``: 0 a cause (the program, the environment, memory), 1 a device fault, 2 a report of a failure (a code
  naming the call that failed), 3 an internal error (E*9999), 4 a consequence (a timeout waiting for another rank),
  5 a tag (torch_npu's ``ERRxxxxx`` labels the message it follows), 6 a warning;
- ``cause``, ``fix``, ``source`` (URL or wheel file), ``releases`` (the torch_npu releases checked, or ``all``).

A log's findings are ordered root cause first: by tier, then by the first line where each appears. The operator is
read from the lines of each finding (``aclnnXxx``, ``fault kernel_name=``, ``OpType=``, ``aten::``) and the user's
frame is the innermost traceback frame outside site-packages, the standard library and torch.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

TIERS = ("cause", "fault", "report", "internal", "consequence", "tag", "warning")
# Prefixes that launchers and loggers put before each line: "[rank1]: ", "(EngineCore_DP0 pid=1878198) ",
# "(train pid=8464, ip=172.16.6.36) ", vLLM's "ERROR 12-10 10:52:09 [patch_core.py:58] "
LINE_PREFIX = re.compile(
    r"^(?:\[rank\d+\]:\s?|\(\w+(?: pid=\d+(?:, ip=[\d.]+)?)?\)\s|(?:\[Stage-\d+\] )?(?:ERROR|WARNING|INFO) "
    r"\d\d-\d\d [\d:.]+ \[[\w.]+:\d+\]\s?)+"
)
FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
NOT_USER = re.compile(
    r"[/\\](?:site-packages|dist-packages)[/\\]|[/\\]lib[/\\]python\d[\d.]*[/\\](?!site-packages)|"
    r"[/\\]torch(?:_npu)?[/\\]|^<"
)
OP_PATTERNS = (
    re.compile(r"\b(aclnn[A-Z]\w*?)(?:GetWorkspaceSize)?\b"),
    re.compile(r"fault kernel_name=\s*(?P<op>[\w./-]+)"),
    re.compile(r"\bOpType=(\w+)"),
    re.compile(r"operator '([\w:.]+)'"),
    re.compile(r"Could not run '([\w:.]+)'"),
    re.compile(r"(?:function error|HCCL function error): (Hccl\w+)"),
    re.compile(r"\b(?:opType|op type)[\s:=\[]+(\w+)"),
    re.compile(r"Exception raised from \w+ at \S*/(\w+?)(?:KernelNpu\w*)?\.cpp"),
)
CODE_SHAPE = re.compile(r"^(?:E[0-9A-Z]\d{4}|\d{1,6}|ERR\d{5}|HCCL\d{1,2}|ACL\w+|HCCL_E_\w+)$", re.IGNORECASE)
FAMILY = re.compile(r"^E(?P<module>[0-9A-Z])(?P<number>\d{4})$")
# The module letter of a CANN code (the CANN error-code reference, "错误码展示方式说明").
MODULES = {
    "1": "GE", "2": "FE", "3": "AI CPU", "4": "TE Fusion", "7": "vector operator plugin", "8": "vector operator",
    "B": "TBE Pass", "C": "Auto Tune", "D": "RL Tune", "E": "runtime", "F": "LxFusion & AutoDeploy", "G": "AOE",
    "H": "ACL", "I": "HCCL", "J": "HCCP", "K": "profiling", "L": "driver", "M": "queue scheduling", "N": "DVPP",
    "O": "AMCT", "P": "dump", "Z": "operators (aclnn)",
}  # fmt: skip
FAMILY_SOURCE = "https://www.hiascend.com/document/detail/en/canncommercial/850/maintenref/troubleshooting/troubleshooting_0225.html"
SUBMODULES = {"00": "PTA", "01": "OPS", "02": "DIST", "03": "GRAPH", "04": "PROF", "99": "UNKNOWN"}
# Where a finding's operator may be named: the lines just before it (torch_npu's "function error: HcclAllreduce"
# before the EI code) and after it (CANN's TraceBack lines)
CONTEXT_BEFORE, CONTEXT_AFTER = 3, 12


@dataclass(frozen=True)
class Entry:
    id: str
    kind: str
    code: str | None
    name: str | None
    pattern: re.Pattern[str]
    tier: int
    cause: str
    fix: str
    source: str
    releases: str
    example: str

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "kind": self.kind, "code": self.code, "name": self.name, "tier": TIERS[self.tier],
            "cause": self.cause, "fix": self.fix, "source": self.source, "releases": self.releases,
        }  # fmt: skip


@dataclass
class Finding:
    entry: Entry
    line: int  # 1-based, the first line where it appears
    text: str  # that line, without the launcher's prefix
    matched: str  # what the pattern matched: the code as printed (ERR01100 for the entry ERR100)
    count: int = 1
    ops: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            **self.entry.as_json(), "matched": self.matched, "line": self.line, "text": self.text,
            "count": self.count, "ops": self.ops,
        }  # fmt: skip

    @property
    def title(self) -> str:
        shown = self.matched if self.entry.kind == "torch_npu" else (self.entry.code or self.entry.id)
        return f"{shown} {self.entry.name}" if self.entry.name and self.entry.name != shown else shown


@dataclass(frozen=True)
class UserFrame:
    file: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} in {self.function}"


@cache
def entries() -> tuple[Entry, ...]:
    data = json.loads(resources.files("ascend_port.data").joinpath("cann_errors.json").read_text("utf-8"))
    return tuple(
        Entry(
            id=e["id"],
            kind=e["kind"],
            code=e["code"],
            name=e["name"],
            pattern=re.compile(e["pattern"]),
            tier=e["tier"],
            cause=e["cause"],
            fix=e["fix"],
            source=e["source"],
            releases=e["releases"],
            example=e["example"],
        )  # fmt: skip
        for e in data["entries"]
    )


# How a numeric code appears in a log (scripts/extract_cann_errors.py writes this pattern for every ACL code): one
# search finds the code, a dictionary its entry, instead of one search per code
NUMERIC = r"(?:error code is:?|runtime result =|ErrCode=|aclnnStatus=|ret =|failed:)\s*{code}\b"
ANY_NUMBER = re.compile(NUMERIC.format(code=r"(\d+)"))


@cache
def by_number() -> dict[str, Entry]:
    return {e.code: e for e in entries() if e.code and e.pattern.pattern == NUMERIC.format(code=e.code)}


@cache
def by_text() -> tuple[Entry, ...]:
    numeric = by_number()
    return tuple(e for e in entries() if not (e.code and numeric.get(e.code) is e))


def looks_like_code(text: str) -> bool:
    return bool(CODE_SHAPE.match(text.strip()))


def lookup(code: str) -> list[Entry]:
    """The entries for a code (``507035``, ``EZ9999``, ``ERR00100``, ``HCCL9``, a name such as
    ``ACL_ERROR_RT_AICORE_EXCEPTION``); a CANN code not in the table gets its module's family entry."""
    wanted = code.strip().upper()
    if match := re.fullmatch(r"ERR(\d\d)(\d{3})", wanted):
        wanted = f"ERR{match.group(2)}"
    found = [e for e in entries() if wanted in ((e.code or "").upper(), (e.name or "").upper())]
    if not found and (family := FAMILY.match(wanted)):
        found = [family_entry(wanted, family.group("module"), int(family.group("number")))]
    return found


def family_entry(code: str, module: str, number: int) -> Entry:
    where = MODULES.get(module, f"module {module}")
    internal = number >= 9000
    return Entry(
        id=f"cann-family-{code}", kind="cann", code=code, name=None, pattern=re.compile(re.escape(code)), tier=2,
        cause=f"A CANN {'internal' if internal else 'user'} error of the {where} module (not in this table: the "
        "letters give the module, 0000-8999 user errors, 9000-9999 internal errors).",
        fix="Read the message printed with the code (cause and solution follow it on screen); search the code in "
        "the CANN error-code reference of your CANN release.",
        source=FAMILY_SOURCE, releases="all", example=code,
    )  # fmt: skip


def submodule(code: str) -> str | None:
    match = re.fullmatch(r"ERR(\d\d)\d{3}", code.strip().upper())
    return SUBMODULES.get(match.group(1)) if match else None


def decode_log(text: str) -> tuple[list[Finding], UserFrame | None]:
    """Every known error in the log, root cause first, and the user's frame nearest before the root cause."""
    lines = [LINE_PREFIX.sub("", raw) for raw in text.splitlines()]
    found: dict[str, Finding] = {}
    for number, line in enumerate(lines, 1):
        matches = [(e, m) for m in ANY_NUMBER.finditer(line) if (e := by_number().get(m.group(1)))]
        matches += [(e, m) for e in by_text() if (m := e.pattern.search(line))]
        for entry, match in matches:
            if entry.id in found:
                found[entry.id].count += 1
                continue
            after = "\n".join(lines[number - 1 : number - 1 + CONTEXT_AFTER])
            ops = operators(after) or operators("\n".join(lines[max(0, number - 1 - CONTEXT_BEFORE) : number - 1]))
            found[entry.id] = Finding(entry, number, line.strip(), match.group(0), ops=ops)
    findings = sorted(found.values(), key=lambda f: (f.entry.tier, f.line))
    return findings, user_frame(lines, findings[0].line if findings else len(lines))


def operators(window: str) -> list[str]:
    ops: list[str] = []
    for pattern in OP_PATTERNS:
        for match in pattern.finditer(window):
            op = match.group(1)
            if op not in ops and op != "aclnn":
                ops.append(op)
    return ops


def user_frame(lines: list[str], before: int) -> UserFrame | None:
    """The last frame of user code (outside site-packages, the standard library, torch) before line ``before``, else
    the last one in the log: the traceback that leads to the root cause, where it is printed before it."""
    frames = [
        (number, UserFrame(m.group("file"), int(m.group("line")), m.group("func")))
        for number, line in enumerate(lines, 1)
        if (m := FRAME.match(line)) and not NOT_USER.search(m.group("file"))
    ]
    earlier = [frame for number, frame in frames if number <= before]
    return earlier[-1] if earlier else (frames[-1][1] if frames else None)


def render_entry(entry: Entry, code: str | None = None) -> str:
    title = entry.code or entry.id
    if code and (part := submodule(code)):
        title = f"{code.upper()} ({part})"
    name = f" {entry.name}" if entry.name and entry.name != entry.code else ""
    return (
        f"{title}{name} [{entry.kind}]\n  cause:    {entry.cause}\n  fix:      {entry.fix}\n"
        f"  source:   {entry.source}\n  releases: {entry.releases}\n"
    )


def render_log(findings: list[Finding], frame: UserFrame | None) -> str:
    out = []
    if findings:
        root = findings[0]
        op = f" in {root.ops[0]}" if root.ops else ""
        out.append(f"Root cause: {root.title}{op} (line {root.line})")
    if frame:
        out.append(f"Your code:  {frame}")
    for rank, finding in enumerate(findings, 1):
        entry = finding.entry
        times = f", {finding.count} times" if finding.count > 1 else ""
        ops = f"\n  operator: {', '.join(finding.ops)}" if finding.ops else ""
        out.append(
            f"\n{rank}. {finding.title} [{entry.kind}, {TIERS[entry.tier]}] line {finding.line}{times}\n"
            f"  log:      {finding.text[:200]}{ops}\n  cause:    {entry.cause}\n  fix:      {entry.fix}\n"
            f"  source:   {entry.source}"
        )
    return "\n".join(out) + "\n"


def code_json(code: str, found: list[Entry]) -> dict[str, Any]:
    """``{"code": what was asked, "entries": [entry...]}``: the entries' fields as in a finding, without its place."""
    return {"code": code, "entries": [e.as_json() for e in found]}


def log_json(findings: list[Finding], frame: UserFrame | None) -> dict[str, Any]:
    """``{"root_cause": finding | null, "user_frame": {file, line, function} | null, "findings": [finding...]}``, a
    finding being its entry's fields plus ``line``, ``text``, ``count`` and ``ops``."""
    return {
        "root_cause": findings[0].as_json() if findings else None,
        "user_frame": {"file": frame.file, "line": frame.line, "function": frame.function} if frame else None,
        "findings": [f.as_json() for f in findings],
    }
