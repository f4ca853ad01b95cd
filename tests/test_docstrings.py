"""codemods/docstrings.py finds triple-quoted strings without a parser, and says so when it cannot be sure."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from ascend_port.core.selection import Selection
from ascend_port.port.python import port_source
from ascend_port.python.docstrings import inside, triple_quoted_spans

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora


def _strings(text: str) -> list[str]:
    return [text[a:b] for a, b in triple_quoted_spans(text) or []]


def test_docstrings_and_doc_constants() -> None:
    text = 'def f():\n    """Use cuda."""\n\nEXAMPLE = r"""\n>>> pipe.to("cuda")\n\'\'\'\n"""\nx = 1\n'
    assert _strings(text) == ['"""Use cuda."""', '"""\n>>> pipe.to("cuda")\n\'\'\'\n"""']


@pytest.mark.parametrize(
    "text",
    [
        'x = \'"""\'\ny = x.cuda()\n',  # a delimiter inside a one-line string
        '# a comment with """\ny = x.cuda()\n',  # inside a comment
        's = """He said "hi"."""\n',  # another quote on a delimiter line
        's = """\\""" cuda """\n',  # an escaped delimiter
        's = """never closed\n',
    ],
)
def test_unsure_means_none(text: str) -> None:
    assert triple_quoted_spans(text) is None


def test_inside() -> None:
    spans = [(3, 10), (20, 30)]
    assert [inside(spans, o) for o in (0, 3, 9, 10, 19, 20, 29, 30)] == [
        False,
        True,
        True,
        False,
        False,
        True,
        True,
        False,
    ]


def test_a_file_whose_triggers_are_all_in_doc_strings_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    import ascend_port.port.python as python

    parsed, real_parse = [], ast.parse
    monkeypatch.setattr(python.ast, "parse", lambda *a, **k: parsed.append(1) or real_parse(*a, **k))
    assert port_source('EXAMPLE = """\n>>> pipe.to("cuda")\n"""\n', Selection()).new_text is None
    assert not parsed
    assert port_source('EXAMPLE = """\n>>> pipe.to("cuda")\n"""\nx = y.cuda()\n', Selection()).new_text.endswith(
        "x = y.npu()\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize("name, version, sdist", corpora.PINNED, ids=[n for n, _, _ in corpora.PINNED])
def test_every_span_is_a_string_to_pythons_parser(name: str, version: str, sdist: bool) -> None:
    root = corpora.fetch(name, version, sdist=sdist)
    for path in corpora.python_files(root):
        text = path.read_text("utf-8", errors="replace")
        spans = triple_quoted_spans(text)
        if not spans:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        lines = text.splitlines(keepends=True)
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line))

        def offset(line: int, column: int, starts: list[int] = starts, lines: list[str] = lines) -> int:
            return starts[line - 1] + len(lines[line - 1].encode("utf-8")[:column].decode("utf-8", "replace"))

        strings = {
            (offset(n.lineno, n.col_offset), offset(n.end_lineno, n.end_col_offset))
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes))
        }
        prefixes = "rRbBuUfF"
        for start, end in spans:
            # the constant may start at a prefix (r""", b""")
            assert any((start - k, end) in strings for k in range(3) if not k or text[start - k] in prefixes), (
                path,
                text[start : start + 60],
            )
