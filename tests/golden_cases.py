"""Golden cases: ``golden/<RULE>/<case>.in.<ext>`` is ported with the default configuration and must equal
``<case>.out.<ext>``; a case without an ``.out`` file must come out unchanged. Folder names are rule IDs.

The findings the port reports are pinned in ``<case>.<ext>.findings`` beside them: the input's name without
``.in`` plus ``.findings`` (``call_forms.in.py`` -> ``call_forms.py.findings``, ``gpu.in.Dockerfile`` ->
``gpu.Dockerfile.findings``, ``extras@pyproject.in.toml`` -> ``extras@pyproject.toml.findings``). The extension
stays in the name because one folder may hold a case in several file types (``NPU614/count.in.sh`` and
``count.in.mk``). One finding a line, sorted by (line, rule, message)::

    <line> <RULE> [<confidence>] <kind>: <message>

A case without a findings file must report no findings (a missing file reads as empty).

A rule that acts only for older torch-npu releases than the default target has its cases (and its doc example,
tests/test_rule_docs.py) ported for the release ``RULE_TARGETS`` names. ``CASE_OPTIONS`` gives single cases options of
their own (a target release, ``--other-devices drop``), by case id."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
# NPU708: the fused optimizer kernels that torch_npu 2.8.0 lacks (the newest release has them all).
RULE_TARGETS = {"NPU708": "2.8.0.post5"}
# NPU709: the drop mode's spelling, the kernels by release, and the releases whose torch has no fused CPU kernels.
CASE_OPTIONS: dict[str, dict[str, str]] = {
    "NPU709/drop_other_devices": {"other_devices": "drop"},
    "NPU709/adam_sgd_without_kernels": {"target": "2.8.0.post5"},
    "NPU709/torch_before_2_4": {"target": "2.3.1.post6"},
    "NPU709/torch_2_1": {"target": "2.1.0.post17"},
}


@dataclass(frozen=True)
class Case:
    rule: str
    input: Path

    @property
    def expected(self) -> Path:
        return self.input.with_name(self.input.name.replace(".in.", ".out.", 1))

    @property
    def findings(self) -> Path:
        """``<case>.<ext>.findings``: the input's name without ``.in``, plus ``.findings``."""
        return self.input.with_name(self.input.name.replace(".in.", ".", 1) + ".findings")

    @property
    def handler_name(self) -> Path:
        """The name the file would have in a project (``train.in.py`` -> ``train.py``), which picks its handler.
        ``<case>@<name>`` gives several cases one fixed file name: ``extras@pyproject.in.toml`` -> ``pyproject.toml``."""
        return self.input.with_name(self.input.name.replace(".in.", ".", 1).split("@", 1)[-1])

    @property
    def id(self) -> str:
        return f"{self.rule}/{self.input.name.split('.in.', 1)[0]}"


def cases() -> list[Case]:
    return [Case(p.parent.name, p) for p in sorted(GOLDEN.glob("NPU*/*.in.*"))]
