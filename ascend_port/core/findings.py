"""What a run learns about one file: findings (rewrites and TODOs) and the file-level result."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ascend_port.core.catalogue import Confidence, Rule

# One greppable format for every TODO the tool writes, e.g.
#   # TODO(ascend-port): NPU107 [low] torch.cuda.memory_usage has no torch.npu counterpart; ...
TODO_PREFIX = "# TODO(ascend-port): "
TODO_PATTERN = re.compile(
    r"#\s*TODO\(ascend-port\):\s*(?P<rule>NPU\d{3})\s*\[(?P<confidence>high|medium|low)\]\s*(?P<text>.*)"
)


def todo_comment(rule: Rule, message: str) -> str:
    return f"{TODO_PREFIX}{rule.id} [{rule.confidence.label}] {message}"


@dataclass(frozen=True)
class Finding:
    """One rewrite or warning at one place. ``applied`` is False when the rule only reports here."""

    rule: Rule
    line: int
    message: str
    applied: bool
    # A TODO comment (the rule's ``todo()``), also from a rule that rewrites elsewhere (NPU210, NPU422): work for a
    # person, never counted as a rewrite.
    todo: bool = False

    @property
    def confidence(self) -> Confidence:
        return self.rule.confidence

    @property
    def rewrites(self) -> bool:
        """Does the port change the code here (or would it, where it only reports)? Low rules never do, nor a TODO."""
        return self.rule.rewrites and not self.todo

    @property
    def kind(self) -> str:
        """``rewrite`` (applied), ``todo`` (a TODO comment written), ``finding`` (reported only, work to do by hand),
        or ``info``: information, not work (NPU407: SDPA runs natively), which never fails a scan."""
        if self.rule.informational:
            return "info"
        if not self.rewrites:
            return "todo" if self.applied else "finding"
        return "rewrite" if self.applied else "finding"


@dataclass
class FileResult:
    """The outcome for one file. ``new_bytes`` is None when nothing changes (or on error)."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    new_bytes: bytes | None = None
    diff: bytes = b""
    error: str | None = None
    skipped: str | None = None
    notes: list[str] = field(default_factory=list)  # warnings about the file that change nothing (stderr)
    # After a hunk review (`apply --no-git -i`): the findings behind the accepted hunks; None without a review.
    accepted: list[Finding] | None = None

    @property
    def changed(self) -> bool:
        return self.new_bytes is not None
