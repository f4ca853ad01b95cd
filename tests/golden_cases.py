"""Golden cases: ``golden/<RULE>/<case>.in.<ext>`` is ported with the default configuration and must equal
``<case>.out.<ext>``; a case without an ``.out`` file must come out unchanged. Folder names are rule IDs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


@dataclass(frozen=True)
class Case:
    rule: str
    input: Path

    @property
    def expected(self) -> Path:
        return self.input.with_name(self.input.name.replace(".in.", ".out.", 1))

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
