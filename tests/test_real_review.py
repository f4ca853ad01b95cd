"""The review's name check on real code (issue 20): InternVL (github.com/OpenGVLab/InternVL at commit 2410d1dbf208,
unpacked into .cache/corpora/InternVL-2410d1dbf208; not on PyPI, so the test skips without it).

Its flash-attn modules are the hard case: the import removal, `import torch_npu`, the attention helpers and the
ported calls are separate hunks that depend on each other by name. Every review that accepts one hunk alone, or
all hunks but one, must give a file that parses and reads no name it does not define; without the name check
(and the hunk splits of run/hunks.py) 33 of the 246 such reviews of 31 files wrote a NameError."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest
from rich.console import Console

from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.git.answers import LineKeys
from ascend_port.git.names import new_undefined_names
from ascend_port.git.review import Review
from ascend_port.port.handlers import handler_for
from ascend_port.run.hunks import FileChange

CORPUS = Path(__file__).resolve().parent.parent / ".cache" / "corpora" / "InternVL-2410d1dbf208"
FILES = (
    "classification/models/flash_attention.py",  # try/except imports, bert_padding, helpers in place of an import
    "internvl_chat/internvl/patch/qwen2_packed_training_patch.py",  # import torch_npu in place of the flash import
    "internvl_chat/internvl/model/internvl_chat/modeling_intern_vit.py",
    "internvl_chat/internvl/model/phi3/modeling_phi3.py",
)

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="InternVL corpus not unpacked")


def review(change: FileChange, answers: str) -> tuple[bytes | None, str]:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, color_system=None)
    files = [FileChange(change.path, change.old, change.new, change.findings)]
    return Review(files, console, LineKeys(console, io.StringIO(answers))).run()[0].new, buffer.getvalue()


@pytest.mark.parametrize("path", FILES)
def test_no_partial_review_writes_an_undefined_name(path: str) -> None:
    old = (CORPUS / path).read_bytes()
    outcome = handler_for(CORPUS / path).port(old, Selection(), PortOptions())
    assert outcome.new_text is not None
    change = FileChange(path, old, outcome.source.encode(outcome.new_text), outcome.findings)
    count = len(change.groups())
    assert count >= 2
    kept = 0
    for i in range(count):
        for answers in ("n\n" * i + "y\n" + "n\n" * (count - i - 1), "y\n" * i + "n\n" + "y\n" * (count - i - 1)):
            new, shown = review(change, answers)
            assert "left unchanged" not in shown, (answers, shown)  # a valid partial result always exists here
            if new is not None:
                ast.parse(new)
                assert new_undefined_names(old, new, change.new) == set(), answers
            kept += "is kept as it was" in shown
    assert kept, "no review of this file needed the name check: the test no longer tests it"
    assert review(change, "y\n" * count)[0] == change.new  # y to everything is still the whole port
