"""The review never writes code that fails by name: hunks that depend on each other go together (issue 20).

The bundled example's model.py is the case the issue found: its first hunk adds ``import torch_npu`` and turns the
flash-attn ``try`` import into ``HAS_FLASH_ATTN = True``, which is right only together with the hunk that ports the
``flash_attn_func(`` call. Accepting hunk 1 and quitting used to write a NameError."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from gitrepo import private_cache
from rich.console import Console
from test_review import spawn

from ascend_port.core.findings import Finding
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.git.answers import LineKeys
from ascend_port.git.names import new_undefined_names, undefined_names
from ascend_port.git.review import Review
from ascend_port.port.handlers import handler_for
from ascend_port.rules.torch_npu_import import IMPORT_TORCH_NPU
from ascend_port.run.hunks import FileChange, apply_edits

__all__ = ["private_cache"]

pytestmark = pytest.mark.usefixtures("private_cache")

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cuda_trainer" / "model.py"


def example_change() -> FileChange:
    old = EXAMPLE.read_bytes()
    outcome = handler_for(EXAMPLE).port(old, Selection(), PortOptions())
    assert outcome.new_text is not None
    return FileChange("model.py", old, outcome.new_text.encode(), outcome.findings)


def run_review(change: FileChange, answers: str) -> tuple[bytes | None, str]:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, color_system=None)
    result = Review([change], console, LineKeys(console, io.StringIO(answers))).run()[0]
    return result.new, buffer.getvalue()


def test_undefined_names() -> None:
    source = (
        b"import os\ndef f():\n    global g\n    g = 1\n    return h + os.sep + [y for y in z]\nclass A:\n    q = 1\n"
    )
    assert undefined_names(source) == {"h", "z"}
    assert undefined_names(b"from m import *\nx\n") is None  # a star import binds names nobody can list
    assert undefined_names(b"def (") is None
    assert undefined_names(b"print(__file__, __name__, len)\n") == set()
    try_import = b"try:\n    from a import b\nexcept ImportError:\n    pass\nb()\n"
    assert undefined_names(try_import) == set()  # a conditional binding is a binding (as in pyflakes)
    assert new_undefined_names(b"x = 1\nprint(x, y)\n", b"print(x, y)\n") == {"x"}  # y was undefined before
    assert new_undefined_names(b"a()\n", b"b()\n", b"b()\n") == set()  # the whole port reads it too: not the review's


def test_each_hunk_lists_only_its_own_rules() -> None:
    _, shown = run_review(example_change(), "n\n" * 5)
    hunks = shown.split("model.py  hunk ")[1:]
    assert "NPU420" not in hunks[0] and "NPU408" in hunks[0] and "NPU100" in hunks[0]
    assert "NPU420" in hunks[1]  # the RMSNorm class line: its finding goes to the forward body it rewrites
    assert "NPU400" in hunks[3] and "NPU102" in hunks[3]


def test_accepting_the_import_hunk_alone_keeps_the_flash_attn_import() -> None:
    change = example_change()
    new, shown = run_review(change, "y\nq\n")
    assert new is not None
    text = new.decode()
    assert "import torch_npu\n" in text
    assert "from flash_attn import flash_attn_func" in text and "\nHAS_FLASH_ATTN = True\n" not in text
    assert "it defines flash_attn_func, which a refused hunk still uses" in shown
    assert new_undefined_names(change.old, new) == set()
    compile(new, "model.py", "exec")


def test_accepting_the_call_hunk_keeps_the_import_removal_and_helper() -> None:
    change = example_change()
    new, _ = run_review(change, "y\nn\nn\ny\nn\n")  # hunk 1 (imports) and hunk 4 (the flash_attn_func call)
    assert new is not None
    text = new.decode()
    assert "from flash_attn import" not in text and "_npu_flash_attn(" in text and "def _npu_flash_attn(" in text
    assert new_undefined_names(change.old, new) == set()


def test_yes_to_everything_is_still_the_whole_port() -> None:
    change = example_change()
    assert run_review(change, "a\n")[0] == change.new


def test_no_partial_acceptance_of_the_example_leaves_an_undefined_name() -> None:
    """Every subset of the five hunks (32 reviews): the result always defines every name it reads."""
    change = example_change()
    for mask in range(32):
        answers = "".join("y\n" if mask >> i & 1 else "n\n" for i in range(5))
        new, _ = run_review(change, answers)
        if new is not None:
            assert new_undefined_names(change.old, new) == set(), answers


def test_terminal_accept_hunk_1_and_quit_writes_running_code(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    shutil.copy(EXAMPLE, folder / "model.py")
    child = spawn(folder, "--no-git", "-i")
    child.expect("(1/5) Apply this hunk to")
    child.send("y")
    child.expect("(2/5) Apply this hunk to")
    child.send("q")
    child.expect("which a refused hunk still uses")
    assert child.finish() == 0
    new = (folder / "model.py").read_bytes()
    assert b"from flash_attn import flash_attn_func" in new and b"import torch_npu\n" in new
    assert new_undefined_names(EXAMPLE.read_bytes(), new) == set()


def _import_finding(line: int) -> Finding:
    return Finding(IMPORT_TORCH_NPU, line, "import torch_npu added", True)


def test_import_torch_npu_in_place_of_a_removed_import_is_a_change_of_its_own() -> None:
    old = b"import torch\nfrom flash_attn import f\n\nx = 1\n"
    new = b"import torch\nimport torch_npu\n\nx = 1\n"
    change = FileChange("m.py", old, new, [_import_finding(2)])
    assert [(c.old_start, c.old_end, c.new_start, c.new_end) for c in change.changes] == [(1, 2, 1, 1), (2, 2, 1, 2)]
    assert change.diff() == FileChange("m.py", old, new).diff()  # the same diff, in finer pieces


def test_attention_helpers_in_place_of_a_removed_import_are_a_change_of_their_own() -> None:
    old = b"import torch\nfrom flash_attn.bert_padding import pad_input\n\nx = 1\n"
    new = b"import torch\n\n\n_NPU_ATTENTION_MASKS = {}\n\n\ndef _npu_pad_input(a):\n    return a\n\nx = 1\n"
    change = FileChange("m.py", old, new)
    assert [(c.old_start, c.old_end, c.new_start, c.new_end) for c in change.changes] == [(1, 2, 1, 1), (2, 2, 1, 8)]
    assert apply_edits(change.old_lines, change.edits(tuple(range(len(change.changes))))) == new
    kept_import = b"import torch\nfrom flash_attn.bert_padding import pad_input\n" + new[len(b"import torch\n") :]
    assert apply_edits(change.old_lines, change.edits((1,))) == kept_import


def test_a_helper_hunk_accepted_alone_brings_import_torch_npu() -> None:
    filler = "".join(f"v{i} = {i}\n" for i in range(10))
    old = f"import torch\n{filler}".encode()
    helper = "\n\ndef _npu_h(a):\n    return torch_npu.npu_h(a)\n"
    new = f"import torch\nimport torch_npu\n{filler}{helper}".encode()
    change = FileChange("m.py", old, new, [_import_finding(2)])
    assert len(change.groups()) == 2
    result, shown = run_review(change, "n\ny\n")
    assert result == new and "`import torch_npu` is applied too" in shown


def test_a_helper_a_rule_writes_is_applied_with_an_accepted_call() -> None:
    """NPU120's NPU branch beside a project's nvidia-smi count calls `_npu_device_count()`, which the port writes
    after that function (Rule.writes): a review that accepts the branch and refuses the helper's hunk still writes
    the helper."""
    golden = (Path(__file__).resolve().parents[1] / "golden" / "NPU120" / "nvidia_smi_count.in.py").read_text("utf-8")
    filler = "".join(f"V{i} = {i}\n" for i in range(12))
    old = golden.replace("\n\nclass Connector:", f"\n\n{filler}\n\nclass Connector:").encode()
    path = Path("connector.py")
    outcome = handler_for(path).port(old, Selection(), PortOptions())
    assert outcome.new_text is not None and "def _npu_device_count()" in outcome.new_text
    change = FileChange("connector.py", old, outcome.new_text.encode(), outcome.findings)
    assert len(change.groups()) == 2  # the helper after the probe, the branch in pick()
    new, shown = run_review(change, "n\ny\n")
    assert new is not None and b"_npu_device_count() > 0" in new and b"def _npu_device_count()" in new
    assert "the helper _npu_device_count is applied too" in shown
    assert new_undefined_names(old, new) == set()
