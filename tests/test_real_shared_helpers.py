"""The attention helpers once per package on real code: InternVL (github.com/OpenGVLab/InternVL at commit
2410d1dbf208, its Python files unpacked into .cache/corpora/InternVL-2410d1dbf208; not on PyPI, so the test skips
without it). Before the shared module, its chat model's port pasted `_npu_flash_attn` into every module that calls
flash-attn (19 copies over the whole repository, 8 in internvl_chat)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ascend_port.rules.attention.shared import MODULE_NAME
from ascend_port.run.engine import RunConfig, run

CORPUS = Path(__file__).resolve().parent.parent / ".cache" / "corpora" / "InternVL-2410d1dbf208"
PATCH = "internvl_chat/internvl/patch"

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="InternVL corpus not unpacked")


def test_internvl_chat_shares_one_module_per_package(monkeypatch):
    monkeypatch.chdir(CORPUS)
    result = run([Path("internvl_chat")], RunConfig(jobs=2, cache=False))
    assert result.created == {f"{PATCH}/{MODULE_NAME}.py"}
    module = next(f for f in result.files if f.path in result.created)
    assert module.new_bytes is not None and module.diff.startswith(b"--- /dev/null\n")
    helpers = {n.name for n in ast.parse(module.new_bytes).body if isinstance(n, ast.FunctionDef)}
    importers = 0
    for file in result.changed:
        if file.path.endswith(".py") and file.new_bytes is not None:
            tree = ast.parse(file.new_bytes)  # every ported file parses
            for node in tree.body:
                if isinstance(node, ast.ImportFrom) and node.module == MODULE_NAME and node.level == 1:
                    importers += 1
                    assert file.path.startswith(PATCH + "/")
                    assert {a.name for a in node.names} <= helpers
                    assert b"def _npu_flash_attn(" not in file.new_bytes
    assert importers == 6
    # The modules alone in their package (internvl.model) or folder (a namespace package, internvl/model/phi3) keep their helpers inline.
    inline = sorted(f.path for f in result.changed if f.new_bytes and b"\ndef _npu_flash_attn(" in f.new_bytes)
    assert inline == [
        "internvl_chat/internvl/model/internvl_chat/modeling_intern_vit.py",  # (alone in its package)
        "internvl_chat/internvl/model/phi3/modeling_phi3.py",
        f"{PATCH}/{MODULE_NAME}.py",
    ]
