"""transforms/lines.py must give the start line LibCST's PositionProvider gives, for every node."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from ascend_port.python.lines import start_lines

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

AWKWARD = [
    "x = 1\r\ny = f(\r\n    2)\r\n",  # CRLF
    "x = 1\ry = 2\r",  # classic Mac line endings
    "# a comment\n\n@decorator(\n    arg)\n# between\ndef f(a,\n      b):\n    '''doc\n    string'''\n    return a\n",
    "if a:\n    pass\n# c\nelif b:  # trailing\n    x = [\n        1,  # one\n    ]\nelse:\n    y = 2\n",
    "class A(\n    B):\n    x: int = 3\n\n    async def g(self):\n        async with a as b, \\\n c:\n            ...\n",
    "s = '''multi\nline''' + f\"{x}\"\\\n    + 'end'\n",
    "",
]


def _compare(code: str) -> None:
    module = cst.parse_module(code)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lines = start_lines(module)
    wrong = [
        (type(n).__name__, r.start.line, lines.get(id(n)))
        for n, r in positions.items()
        if lines.get(id(n)) != r.start.line
    ]
    assert not wrong


@pytest.mark.parametrize("code", AWKWARD)
def test_awkward_code(code: str) -> None:
    _compare(code)


def test_golden_inputs() -> None:
    for path in sorted(GOLDEN.glob("NPU*/*.in.py")):
        _compare(path.read_text("utf-8"))
