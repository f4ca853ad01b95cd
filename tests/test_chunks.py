"""Which lines reach LibCST (codemods/chunks.py): the statement, function or class each trigger's scope asks for,
and nothing for matches in text no rule rewrites."""

from __future__ import annotations

import ast
import textwrap

import pytest

from ascend_port.core.options import PortOptions
from ascend_port.core.sources import python_lines
from ascend_port.python.chunks import Splice, hot_chunks, splice
from ascend_port.python.literals import TriggerFilter
from ascend_port.python.names import ImportIndex
from ascend_port.python.scopes import FUNCTIONS, Trigger, imported, innermost, nothing, statement, top
from ascend_port.rules.torch_npu_import import spliced_statements, top_statements

MODULE = textwrap.dedent('''\
    """Module docstring: cuda."""
    import torch


    class Model:
        """Class docstring naming cuda."""

        def setup(self):
            x = 1
            # cuda in a comment line
            y = 2  # cuda in a trailing comment
            z = 3; w = "cuda"
            if x:
                v = "cuda"
            return x

        def forward(self, q):
            return q.cuda()
    ''')


def chunks(trigger: Trigger, text: str = MODULE) -> list[tuple[int, int]]:
    lines = python_lines(text)
    tree = ast.parse(text)
    found = hot_chunks(lines, tree, TriggerFilter([trigger]).matches(text), ImportIndex.from_ast(tree))
    return [(c.first, c.last) for c in found]


def test_statement_scope_takes_the_innermost_statement_and_skips_strings_and_comments() -> None:
    assert chunks(Trigger(r"v = \"cuda\"|q\.cuda", statement)) == [(14, 14), (18, 18)]
    # line 12's statements share the line: they are parsed with the function around them
    assert chunks(Trigger("cuda", statement)) == [(8, 15), (18, 18)]


def test_function_scope() -> None:
    in_function = innermost(*FUNCTIONS, otherwise=nothing)
    assert chunks(Trigger("cuda", in_function)) == [(8, 15), (17, 18)]


def test_class_and_top_scopes() -> None:
    class_scope = innermost(ast.ClassDef, otherwise=statement)
    assert chunks(Trigger(r"q\.cuda", class_scope)) == [(5, 18)]
    assert chunks(Trigger(r"q\.cuda", top)) == [(5, 18)]


def test_a_scope_may_decline() -> None:
    assert chunks(Trigger("cuda", imported("torch.cuda"))) == []
    assert chunks(Trigger("cuda", imported("torch"))) == [(8, 15), (18, 18)]


def test_a_statement_sharing_its_line_with_the_next_is_parsed_with_its_parent() -> None:
    text = "def f():\n    a = 1; b = 'cuda'\n    return b\n"
    assert chunks(Trigger("cuda", statement), text) == [(1, 3)]


def test_a_chunk_includes_the_comments_above_it() -> None:
    text = "def f():\n    x = 1\n    # TODO(ascend-port): NPU101 [low] something\n    y = x.cuda()\n"
    assert chunks(Trigger("cuda", statement), text) == [(3, 4)]


@pytest.mark.parametrize(
    "changes",
    [
        {},  # nothing
        {"2:2": "import torch_npu\nimport torch\n"},  # a top-level chunk that gains a statement
        {"5:18": "# TODO(ascend-port): NPU000 [low] x\nclass Model:\n    pass\n"},  # a shorter class
        {"11:11": "        y = 2\n        y2 = 3\n"},  # a nested chunk: only the class's last line moves
    ],
)
def test_the_statements_after_splicing_are_those_of_the_spliced_text(changes: dict[str, str]) -> None:
    lines = python_lines(MODULE)
    tree = ast.parse(MODULE)
    splices = []
    for span, code in sorted(changes.items()):
        first, last = map(int, span.split(":"))
        nested = tree.body[2].lineno <= first and last < tree.body[2].end_lineno and first > tree.body[2].lineno
        splices.append(Splice(first, last, code, None if nested else ast.parse(code).body))
    new_text = splice(lines, splices)
    assert spliced_statements(tree.body, splices) == top_statements(ast.parse(new_text).body)


def test_a_ported_chunk_that_would_not_parse_in_place_is_refused() -> None:
    from ascend_port.core.porting import PortError
    from ascend_port.port.python import _checked_body

    with pytest.raises(PortError):
        _checked_body("    x = 1\n", "  x = 1\n", "if 1:\n")  # parses on its own, not among its siblings
    with pytest.raises(PortError):
        _checked_body("x = 1\n", "x = (\n", "")
    assert _checked_body("    x = 1\n", "    # TODO(ascend-port): NPU000 [low] y\n    x = 2\n", "if 1:\n") is None
    assert [type(s).__name__ for s in _checked_body("x = 1\n", "import a\nx = 2\n", "")] == ["Import", "Assign"]


def test_a_chunk_names_the_owners_of_the_matches_it_holds() -> None:
    # A function chunk (one trigger's scope) holds a statement chunk (another's): the function is parsed once, for
    # both owners; a chunk of its own keeps its owner alone.
    lines = python_lines(MODULE)
    tree = ast.parse(MODULE)
    in_function = innermost(*FUNCTIONS, otherwise=nothing)
    search = TriggerFilter([(Trigger(r"v = ", in_function), "function"), (Trigger(r"q\.cuda", statement), "call")])
    found = hot_chunks(lines, tree, search.matches(MODULE), ImportIndex.from_ast(tree))
    assert [(c.first, c.last, set(c.owners)) for c in found] == [(8, 15, {"function"}), (18, 18, {"call"})]
    search = TriggerFilter([(Trigger("cuda", in_function), "function"), (Trigger(r"v = ", statement), "v")])
    found = hot_chunks(lines, tree, search.matches(MODULE), ImportIndex.from_ast(tree))
    assert [(c.first, c.last, set(c.owners)) for c in found] == [(8, 15, {"function", "v"}), (17, 18, {"function"})]


def test_a_chunk_runs_only_the_transformers_whose_triggers_made_it_hot(monkeypatch: pytest.MonkeyPatch) -> None:
    from ascend_port.core.selection import Selection
    from ascend_port.port import python as port_python
    from ascend_port.rules.device import DeviceTransformer
    from ascend_port.rules.precision import PrecisionCallTransformer

    ran: list[set[str]] = []
    run = port_python.run_transformers

    def recorded(module, ctx, classes):
        ran.append({cls.__name__ for cls in classes})
        return run(module, ctx, classes)

    monkeypatch.setattr(port_python, "run_transformers", recorded)
    text = "import torch\n\nx = torch.zeros(3, dtype=torch.float64)\ny = x.to('cpu')\n"
    port_python.port_source(text, Selection(), PortOptions())
    assert ran == [{PrecisionCallTransformer.__name__}]  # (no `cuda`: the device rules never see it)
    ran.clear()
    port_python.port_source(text.replace("'cpu'", "'cuda'"), Selection(), PortOptions())
    assert ran[0] == {PrecisionCallTransformer.__name__} and DeviceTransformer.__name__ in ran[1]


def test_a_statement_in_an_elif_block_is_parsed_on_its_own() -> None:
    text = "def f(a):\n    if a:\n        pass\n    elif a > 1:\n        x = 'cuda'\n    return a\n"
    assert chunks(Trigger("cuda", statement), text) == [(5, 5)]
    text = "def f(a):\n    if a:\n        pass\n    elif a == 'cuda':\n        x = 1\n    return a\n"
    assert chunks(Trigger("cuda", statement), text) == [(2, 5)]  # the elif's test: the whole if


def test_import_torch_npu_goes_only_between_top_level_statements() -> None:
    from ascend_port.rules.torch_npu_import import _between_top_level_statements

    def at(index: int) -> bool:
        lines = python_lines("import os\nx = (\n    1)\nif x:\n    y = 2\n    z = 3\n")
        lines.insert(index, "import torch_npu\n")
        return _between_top_level_statements(lines, index)

    assert at(0) and at(1) and at(3) and at(6)
    assert not at(2)  # inside the bracket
    assert not at(5)  # between the statements of a block
    lines = python_lines("if x:\n    y = 2\nelse:\n    z = 3\n")
    lines.insert(2, "import torch_npu\n")
    assert not _between_top_level_statements(lines, 2)  # between a statement and its clause


@pytest.mark.parametrize(
    "text, expected",
    [
        ("x = a.cuda()\n\n\ndef f():\n    pass\n", 15),  # cut at the next top-level def
        ("x = a.cuda()\n\n\ndef f():\n    import os\n", None),  # an import follows, at any depth
        ("x = a.cuda()\n\n\ndef f():\n    pass\nif x:\n    y = 1\n", None),  # a block follows
        ("x = a.cuda()\n\n\nclass A:\n    pass\n\n\nz = 1\n", 15),  # simple statements may follow
        ("x = a.cuda()\n", None),  # nothing follows
        ("x = a.cuda()\r\n\r\ndef f():\r\n    pass\r\n", None),  # (\r line endings: no cut)
    ],
)
def test_where_a_module_is_cut(text: str, expected: int | None) -> None:
    from ascend_port.port.python import _cut

    assert _cut(text, text.index("cuda")) == expected


def test_a_cut_inside_a_string_parses_the_whole_module() -> None:
    from ascend_port.core.selection import Selection
    from ascend_port.port.python import port_source

    text = 'x = a.cuda()\ns = """\ndef f():\n"""\ny = b.cuda()\n'
    assert port_source(text, Selection()).new_text.count(".npu()") == 2


@pytest.mark.parametrize(
    "rest",
    [
        '\n\ndef f(x):\n    return x.cpu()\n\n\n@decorate\nclass B:\n    """doc"""\n    y: int = 1\n',
        "\n\ndef g():\n    pass\nz = 1  # a simple statement after a definition\n",
        "\n\ndef broken(:\n",  # (the rest does not parse: nor does the module)
    ],
)
def test_the_whole_module_is_its_head_and_its_rest(rest: str) -> None:
    from ascend_port.port.python import _cut, _whole_module

    text = "import torch\n\nx = torch.zeros(2).cuda()\n" + rest
    cut = _cut(text, text.index("cuda"))
    assert cut is not None
    whole = _whole_module(text, cut, ast.parse(text[:cut]))
    try:
        expected = ast.dump(ast.parse(text), include_attributes=True)
    except SyntaxError:
        assert whole is None
    else:
        assert whole is not None and ast.dump(whole, include_attributes=True) == expected


def test_a_rule_that_needs_the_rest_of_the_module_reads_it() -> None:
    # rotate_half is defined below the last trigger: the head does not have it, the whole module does
    from ascend_port.core.selection import Selection
    from ascend_port.port.python import port_source

    text = textwrap.dedent("""\
        import torch


        def apply(q, cos, sin, unsqueeze_dim=1):
            cos = cos.unsqueeze(unsqueeze_dim)
            sin = sin.unsqueeze(unsqueeze_dim)
            return (q * cos) + (rotate_half(q) * sin)


        def rotate_half(x):
            x1 = x[..., : x.shape[-1] // 2]
            x2 = x[..., x.shape[-1] // 2 :]
            return torch.cat((-x2, x1), dim=-1)
        """)
    assert "torch_npu.npu_rotary_mul(q, cos, sin)" in port_source(text, Selection()).new_text


TRAINER = textwrap.dedent("""\
    from lightning import Trainer


    class Trainer:
        def fit(self):
            return 1


    class MyTrainer(Trainer):
        pass


    trainer = Trainer(accelerator="gpu")
    """)


def test_a_class_named_by_a_statement_trigger_is_no_use_of_the_name() -> None:
    # `class Trainer:` would make the whole class (transformers' Trainer: 4,500 lines) a chunk for a rule that
    # rewrites calls: the definition's name is skipped, its bases and the calls are not.
    assert chunks(Trigger(r"\bTrainer\b", statement), TRAINER) == [(1, 1), (9, 10), (13, 13)]
    # another scope still sees the class by its name (RMSNorm classes are found so)
    class_scope = innermost(ast.ClassDef, otherwise=statement)
    assert chunks(Trigger(r"\bTrainer\b", class_scope), TRAINER) == [(1, 1), (4, 6), (9, 10), (13, 13)]


def test_a_chunk_whose_port_records_no_finding_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # port/python.py does not print a chunk again when its port recorded nothing: every change is reported. Checked
    # on every golden Python case (each case's chunks, with every rule).
    from golden_cases import cases

    import ascend_port.port.python as python_port
    from ascend_port.core.selection import Selection

    silent: list[str] = []
    chunks = 0
    run = python_port.run_transformers

    def checked(module, ctx, classes):
        nonlocal chunks
        recorded = len(ctx.findings)
        ported = run(module, ctx, classes)
        chunks += 1
        if len(ctx.findings) == recorded and ported.code != module.code:
            silent.append(module.code)
        return ported

    monkeypatch.setattr(python_port, "run_transformers", checked)
    for case in cases():
        if case.input.suffix == ".py":
            try:
                python_port.port_source(case.input.read_text("utf-8"), Selection())
            except python_port.PortError:
                pass
    assert chunks > 500
    assert not silent, silent[:3]
