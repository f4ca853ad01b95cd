"""Per-line suppression (issue 20, "Configuration like ruff's"): `# ascend-port: ignore[NPU104]` leaves its statement
as it is and reports nothing there for those rules; a bare `# ascend-port: ignore` for every rule; prefixes match
as --select/--ignore match; `# ascend-port: ignore-file[...]` at the top covers the file. The side effects follow:
no `import torch_npu` for suppressed rewrites, no TODO for a suppressed finding, reports without them, a warning for
an ID that names no rule. Each case is a golden-like pair written here: input, expected output (None: unchanged),
expected findings (rule:line, lines of the file as scanned but NPU100's, which is in the ported file).
"""

from __future__ import annotations

import ast
import difflib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.core.suppression import from_lines, from_python
from ascend_port.port.handlers import handler_for
from ascend_port.port.python import port_source
from ascend_port.run.engine import RunConfig, run

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora


def port(text: str) -> tuple[str | None, list[str]]:
    outcome = port_source(text, Selection())
    return outcome.new_text, sorted(f"{f.rule.id}:{f.line}" for f in outcome.findings)


CASES = {
    "ignored-line-next-ported": (
        "import torch\n\nx = torch.zeros(3).cuda()  # ascend-port: ignore[NPU101]\ny = torch.zeros(3).cuda()\n",
        "import torch\nimport torch_npu\n\n"
        "x = torch.zeros(3).cuda()  # ascend-port: ignore[NPU101]\ny = torch.zeros(3).npu()\n",
        ["NPU100:2", "NPU101:4"],
    ),
    "bare-ignore": (
        "import torch\n\ntorch.cuda.synchronize()  # ascend-port: ignore\ntorch.cuda.empty_cache()\n",
        "import torch\nimport torch_npu\n\ntorch.cuda.synchronize()  # ascend-port: ignore\ntorch.npu.empty_cache()\n",
        ["NPU100:2", "NPU106:4"],
    ),
    "prefix-lowercase-and-list": (
        'import torch\n\nx = torch.zeros(3, device="cuda")  # ascend-port: ignore[npu6, NPU1]\n',
        None,
        [],
    ),
    "other-rule-not-suppressed": (
        "import torch\n\nx = torch.zeros(3).cuda()  # ascend-port: ignore[NPU104]\n",
        "import torch\nimport torch_npu\n\nx = torch.zeros(3).npu()  # ascend-port: ignore[NPU104]\n",
        ["NPU100:2", "NPU101:3"],
    ),
    "multi-line-call-comment-on-last-line": (
        'import torch\n\nx = torch.zeros(\n    3,\n    device="cuda",\n)  # ascend-port: ignore[NPU103]\n'
        'y = torch.ones(3, device="cuda")\n',
        'import torch\nimport torch_npu\n\nx = torch.zeros(\n    3,\n    device="cuda",\n)  # ascend-port: ignore[NPU103]\n'
        'y = torch.ones(3, device="npu")\n',
        ["NPU100:2", "NPU103:7"],
    ),
    "multi-line-call-comment-on-first-line": (
        'import torch\n\nx = torch.zeros(  # ascend-port: ignore\n    3,\n    device="cuda",\n)\n',
        None,
        [],
    ),
    "only-use-no-import": (
        "import torch\n\nmodel = model.cuda()  # ascend-port: ignore[NPU101]\n",
        None,
        [],
    ),
    "todo-suppressed": (
        "import torch\n\nused = torch.cuda.memory_usage()  # ascend-port: ignore[NPU107]\n"
        "other = torch.cuda.memory_usage()\n",
        "import torch\n\nused = torch.cuda.memory_usage()  # ascend-port: ignore[NPU107]\n"
        "# TODO(ascend-port): NPU107 [low] torch.cuda.memory_usage has no torch.npu counterpart (torch_npu 2.14.0): "
        "port by hand\nother = torch.cuda.memory_usage()\n",
        ["NPU107:4"],
    ),
    "compound-header-only": (
        "import torch\n\nwith torch.cuda.amp.autocast():  # ascend-port: ignore\n    x = torch.zeros(3).cuda()\n",
        "import torch\nimport torch_npu\n\n"
        "with torch.cuda.amp.autocast():  # ascend-port: ignore\n    x = torch.zeros(3).npu()\n",
        ["NPU100:2", "NPU101:4"],
    ),
    "file-level": (
        "#!/usr/bin/env python\n# ascend-port: ignore-file[NPU1]\nimport torch\n\nx = torch.zeros(3).cuda()\n",
        None,
        [],
    ),
    "file-level-only-at-the-top": (
        "import torch\n\nx = torch.zeros(3).cuda()\n# ascend-port: ignore-file\n",
        "import torch\nimport torch_npu\n\nx = torch.zeros(3).npu()\n# ascend-port: ignore-file\n",
        ["NPU100:2", "NPU101:3"],
    ),
    "a-string-is-no-comment": (
        'import torch\n\nx = torch.zeros(3).cuda(); s = "# ascend-port: ignore"\n',
        'import torch\nimport torch_npu\n\nx = torch.zeros(3).npu(); s = "# ascend-port: ignore"\n',
        ["NPU100:2", "NPU101:3"],
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_suppression_cases(name: str) -> None:
    text, expected, findings = CASES[name]
    new_text, found = port(text)
    assert new_text == expected
    assert found == sorted(findings)
    if new_text is not None:
        assert port(new_text)[0] is None  # idempotent: the suppressed lines stay suppressed


def test_parser_spreads_over_the_statement_and_reads_prefixes() -> None:
    text = "x = f(\n    1,\n)  # ascend-port: ignore[NPU1, npu203]\ny = 2  # ascend-port: ignore\n"
    found = from_python(text, ast.parse(text))
    assert all(found.suppresses("NPU101", line) for line in (1, 2, 3))
    assert found.suppresses("NPU203", 2) and not found.suppresses("NPU204", 2)
    assert found.suppresses("NPU801", 4) and not found.suppresses("NPU101", 5)
    assert found.unknown(["NPU101", "NPU203"]) == []
    assert from_lines("a\n# ascend-port: ignore[NPU9Z]\n").unknown(["NPU101"]) == [(2, "NPU9Z")]


def test_shell_continuation_lines_share_the_comment() -> None:
    found = from_lines("pip install \\\n  flash-attn  # ascend-port: ignore\necho\n")
    assert found.suppresses("NPU600", 1) and found.suppresses("NPU600", 2) and not found.suppresses("NPU600", 3)


def port_file_text(tmp_path: Path, name: str, text: str) -> tuple[str | None, list[str]]:
    path = tmp_path / name
    path.write_text(text)
    handler = handler_for(path)
    assert handler is not None
    ported = handler.port(path.read_bytes(), Selection(), PortOptions())
    return ported.new_text, sorted(f"{f.rule.id}:{f.line}" for f in ported.findings)


def test_requirements_line(tmp_path: Path) -> None:
    text = "torch==2.1.0\nflash-attn==2.5.0  # ascend-port: ignore[NPU600]\nnumpy\n"
    new_text, findings = port_file_text(tmp_path, "requirements.txt", text)
    assert new_text is not None and "flash-attn==2.5.0  # ascend-port: ignore[NPU600]\n" in new_text
    assert "NPU600" not in " ".join(findings) and "torch-npu" in new_text
    # the torch line suppressed: no torch-npu pin is added for it, and flash-attn is still removed
    text = "torch==2.1.0  # ascend-port: ignore\nflash-attn==2.5.0\n"
    new_text, findings = port_file_text(tmp_path, "requirements.txt", text)
    assert new_text == "torch==2.1.0  # ascend-port: ignore\n" + new_text.splitlines(True)[1]
    assert "torch-npu" not in new_text and [f.split(":")[0] for f in findings] == ["NPU600"]


def test_shell_script_line(tmp_path: Path) -> None:
    text = (
        "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0  # ascend-port: ignore\nexport CUDA_VISIBLE_DEVICES=1\n"
        "pip install \\\n  flash-attn  # ascend-port: ignore[NPU6]\n"
    )
    new_text, findings = port_file_text(tmp_path, "run.sh", text)
    assert new_text == text.replace("CUDA_VISIBLE_DEVICES=1", "ASCEND_RT_VISIBLE_DEVICES=1")
    assert findings == ["NPU610:3"]


def test_notebook_cell_line(tmp_path: Path) -> None:
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": ["import torch\n", "x = torch.zeros(3).cuda()  # ascend-port: ignore\n", "y = torch.zeros(3).cuda()"],
    }
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    new_text, findings = port_file_text(tmp_path, "demo.ipynb", json.dumps(notebook, indent=1))
    assert new_text is not None
    (source,) = [c["source"] for c in json.loads(new_text)["cells"] if "x = " in "".join(c["source"])]
    assert "x = torch.zeros(3).cuda()  # ascend-port: ignore\n" in source and "y = torch.zeros(3).npu()" in source
    assert [f.split(":")[0] for f in findings].count("NPU101") == 1


def test_unknown_id_warns_with_file_and_line_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import torch\nx = torch.zeros(3).cuda()  # ascend-port: ignore[NPU999, NPU101]\n")
    (tmp_path / "b.py").write_text("import torch\ny = torch.zeros(3).cuda()\n")
    for _ in range(2):  # the second run is answered from the cache: the warning stays
        result = run([tmp_path], RunConfig(jobs=1, cache=True))
        notes = [n for n in result.notes if "NPU999" in n]
        assert len(notes) == 1 and re.search(r"a\.py:2: .*NPU999.* names no rule", notes[0])
        by_name = {Path(f.path).name: f for f in result.files}
        assert not by_name["a.py"].changed and not by_name["a.py"].findings and by_name["b.py"].changed


def test_scan_counts_and_reports_leave_suppressed_findings_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(
        "import torch\n\nx = torch.zeros(3).cuda()  # ascend-port: ignore\ny = torch.zeros(3).cuda()\n"
        "used = torch.cuda.memory_usage()  # ascend-port: ignore[NPU107]\n"
    )
    runner = CliRunner()
    result = runner.invoke(app, ["scan", ".", "--jobs", "1", "--format", "json"], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    findings = [(f["rule"], f["line"]) for f in json.loads(result.stdout)["findings"]]
    assert sorted(findings) == [("NPU100", 1), ("NPU101", 4)]
    text = runner.invoke(app, ["scan", ".", "--jobs", "1"], catch_exceptions=False).output
    assert "2 rewrites, 0 TODOs" in text
    (tmp_path / "train.py").write_text("import torch\n\nx = torch.zeros(3).cuda()  # ascend-port: ignore\n")
    assert runner.invoke(app, ["scan", ".", "--jobs", "1"], catch_exceptions=False).exit_code == 0


def _statement_lines(tree: ast.Module, line: int) -> tuple[int, int] | None:
    """The first and last line of the innermost simple statement on ``line`` (None: a decorator, a header)."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not hasattr(node, "body") and node.lineno <= line <= node.end_lineno:
            if best is None or node.end_lineno - node.lineno < best[1] - best[0]:
                best = (node.lineno, node.end_lineno)
    return best


def _transformers_file() -> Path:
    """transformers 5.23.0's modeling_utils.py, the pinned wheel downloaded once (benchmarks/corpora.py)."""
    try:
        root = corpora.fetch(*corpora.TRANSFORMERS)
    except (subprocess.CalledProcessError, OSError) as error:
        pytest.skip(f"cannot download transformers {corpora.TRANSFORMERS[1]}: {error}")
    return root / "transformers" / "modeling_utils.py"


@pytest.mark.slow
def test_real_code_only_the_suppressed_statements_stay(tmp_path: Path) -> None:
    """transformers' modeling_utils.py: suppress some statements the port changes (a rewrite by ID, one bare, a
    TODO by prefix, a multi-line statement by its last line); exactly those stay as they were, and the rest of the
    file is ported as without the comments."""
    original = _transformers_file().read_text("utf-8")
    plain, plain_findings = port(original)
    assert plain is not None
    lines = original.splitlines(True)
    tree = ast.parse(original)
    changed = [i1 + 1 for i1, i2, _ in _changes(lines, plain) if i2 > i1]
    # statements the port rewrites (by old line) and the comment each gets
    targets = {}
    for line in changed:
        found = _statement_lines(tree, line)
        if found is None:
            continue
        first, last = found
        text = "".join(lines[first - 1 : last])
        if ".cuda(" in text and "super()" in text and "ignore[NPU101]" not in targets.values():
            targets[(first, last)] = "ignore[NPU101]"
        elif ".cuda(" in text and "ignore" not in targets.values():
            targets[(first, last)] = "ignore"
        elif "get_device_capability" in text and last > first:
            targets[(first, last)] = "ignore[NPU1]"  # a multi-line raise: the comment on its last line
    assert len(targets) == 3, targets
    marked = list(lines)
    for (_, last), comment in targets.items():
        marked[last - 1] = marked[last - 1].rstrip("\n") + f"  # ascend-port: {comment}\n"
    new_text, findings = port("".join(marked))
    assert new_text is not None
    new_lines = new_text.splitlines(True)
    # 1. the suppressed statements are in the output as they were (with their comment), nothing else on those lines
    for first, last in targets:
        block = "".join(marked[first - 1 : last])
        assert block in new_text
        index = new_lines.index(marked[first - 1])
        assert not new_lines[index - 1].lstrip().startswith("# TODO(ascend-port)") or "NPU1" not in new_lines[index - 1]
    # 2. the rest is ported as without the comments: the changes to the original are the plain port's, less those
    # that touch a suppressed statement (a TODO above it included)
    stripped = re.sub(r"  # ascend-port: ignore(?:\[[^\]]*\])?", "", new_text)
    spans = [(first - 1, last) for first, last in targets]  # 0-based, end exclusive

    def touches(i1: int, i2: int) -> bool:
        return any(i1 < end and i2 > start or i1 == i2 and start <= i1 < end for start, end in spans)

    plain_changes = [c for c in _changes(lines, plain) if not touches(c[0], c[1])]
    assert _changes(lines, stripped) == plain_changes and plain_changes
    # 3. the findings: those of the plain port less the ones on the suppressed statements
    suppressed = {n for first, last in targets for n in range(first, last + 1)}
    kept = [f for f in plain_findings if f.startswith("NPU100") or int(f.split(":")[1]) not in suppressed]
    assert findings == kept and len(kept) < len(plain_findings)
    assert port(new_text)[0] is None


def _changes(old_lines: list[str], new: str) -> list[tuple[int, int, tuple[str, ...]]]:
    """The changes from ``old_lines`` to ``new``: (first old line index, end index, new lines)."""
    new_lines = new.splitlines(True)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    return [(i1, i2, tuple(new_lines[j1:j2])) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def test_file_level_steps_keep_a_suppressed_import() -> None:
    """NPU408 (unused GPU import removed) and NPU411 (import guarded) work on the whole file after the statements
    are ported: an import a comment covers stays as it is, while the call below is still ported."""
    text = (
        "import torch\nfrom flash_attn import flash_attn_func{}\n\n\n"
        "def attn(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n"
    )
    plain, plain_findings = port(text.format(""))
    assert plain is not None and "from flash_attn import" not in plain and "NPU408:2" in plain_findings
    kept = "from flash_attn import flash_attn_func  # ascend-port: ignore[NPU408, NPU411]\n"
    new_text, findings = port(text.format("  # ascend-port: ignore[NPU408, NPU411]"))
    assert new_text is not None and kept in new_text and "try:" not in new_text.split("def ")[0]
    assert "_npu_flash_attn(q, k, v, causal=True)" in new_text
    assert [f for f in findings if f.startswith(("NPU408", "NPU411"))] == []
    assert port(new_text)[0] is None


def test_dockerfile_comment_line_covers_the_next_instruction(tmp_path: Path) -> None:
    """A Dockerfile has no comment after an instruction: a comment line of its own covers the next line."""
    text = "FROM python:3.11\n# ascend-port: ignore[NPU610]\nENV CUDA_VISIBLE_DEVICES=0\nENV CUDA_VISIBLE_DEVICES=1\n"
    new_text, findings = port_file_text(tmp_path, "Dockerfile", text)
    assert new_text == text.replace("CUDA_VISIBLE_DEVICES=1", "ASCEND_RT_VISIBLE_DEVICES=1")
    assert findings == ["NPU610:4"]
