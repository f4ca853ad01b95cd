"""The attention helpers once per project (rules/attention/shared.py, a project step): one module the port writes, imported by every
ported module of the package, in each way `apply` writes (--no-git, --dry-run, git, --interactive)."""

from __future__ import annotations

import ast
import importlib
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
from gitrepo import git, invoke, make_repo, private_cache  # noqa: F401 (fixture)

from ascend_port.core.options import PortOptions
from ascend_port.rules.attention.shared import MARKER, MODULE_NAME, find_block, replace_block

pytestmark = pytest.mark.usefixtures("private_cache")

MODULE = """\
\"\"\"Attention of the {name} block.\"\"\"
import torch
from flash_attn import flash_attn_func


def attend(q, k, v):
    return flash_attn_func(q, k, v, causal={causal})
"""

DEVICE = """\
import torch
from flash_attn import flash_attn_func


def attend(q, k, v):
    return flash_attn_func(q, k, v)


def to_device(x):
    return x.cuda()
"""

SCRIPT = """\
import torch
from flash_attn import flash_attn_func

q = torch.randn(1, 4, 2, 8)
print(flash_attn_func(q, q, q).shape)
"""

PROJECT = {
    "pkg/__init__.py": "",
    "pkg/a.py": MODULE.format(name="a", causal=True),
    "pkg/b.py": MODULE.format(name="b", causal=False),
    "pkg/sub/__init__.py": "",
    "pkg/sub/c.py": DEVICE,
    "train.py": SCRIPT,
}
IMPORTS = {
    "pkg/a.py": f"from .{MODULE_NAME} import _npu_flash_attn",
    "pkg/b.py": f"from .{MODULE_NAME} import _npu_flash_attn",
    "pkg/sub/c.py": f"from ..{MODULE_NAME} import _npu_flash_attn",
    "train.py": f"from pkg.{MODULE_NAME} import _npu_flash_attn",
}
SHARED = f"pkg/{MODULE_NAME}.py"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def assert_shared(root: Path) -> None:
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob(f"{MODULE_NAME}.py")) == [SHARED]
    module = (root / SHARED).read_text()
    assert module.startswith(MARKER) and module.count("def _npu_flash_attn(") == 1
    for name, statement in IMPORTS.items():
        text = (root / name).read_text()
        assert statement + "\n" in text, name
        assert "def _npu_flash_attn" not in text and "_NPU_ATTENTION_MASKS" not in text, name
        assert "flash_attn_func" not in text, name


def run_ported_package(root: Path) -> None:
    """Import the ported package and run its attention on CPU (the torch_npu fake) against flash-attn's reference."""
    torch = pytest.importorskip("torch")
    import gpu_reference
    import npu_reference

    q, k, v = (torch.randn(2, 16, 4, 8, dtype=torch.float16) for _ in range(3))  # (flash-attn: fp16 and bf16 only)
    sys.path.insert(0, str(root))
    fake = types.ModuleType("torch_npu")
    fake.npu_fusion_attention = npu_reference.npu_fusion_attention  # type: ignore[attr-defined]
    # (only these two entries are swapped: restoring all of sys.modules would drop torch's lazily imported parts)
    saved = {name: sys.modules.get(name) for name in ("torch_npu", "flash_attn")}
    sys.modules.update({"torch_npu": fake, "flash_attn": None})  # type: ignore[dict-item] (None: flash-attn is gone)
    try:
        a = importlib.import_module("pkg.a")
        c = importlib.import_module("pkg.sub.c")
        torch.testing.assert_close(a.attend(q, k, v), gpu_reference.flash_attn_func(q, k, v, causal=True))
        torch.testing.assert_close(c.attend(q, k, v), gpu_reference.flash_attn_func(q, k, v))
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == "pkg" or n.startswith("pkg.")]:
            del sys.modules[name]


def test_no_git_writes_the_module_once_and_every_file_imports_it(tmp_path):
    root = write(tmp_path / "proj", PROJECT)
    result = invoke(str(root), "-j", "1", "--no-git")
    assert result.exit_code == 0, result.output
    assert_shared(root)
    run_ported_package(root)
    # A second run changes nothing: the imported helper counts as defined, and the module ports to itself.
    again = invoke(str(root), "-j", "1", "--dry-run")
    assert again.exit_code == 0 and "---" not in again.stdout, again.output


def test_dry_run_diff_creates_the_module_with_git_apply(tmp_path):
    root = write(tmp_path / "proj", PROJECT)
    result = invoke(str(root), "-j", "1", "--dry-run", "--exit-zero")
    assert result.exit_code == 0, result.output
    assert f"--- /dev/null\n+++ b/{(root / SHARED).as_posix()}" in result.stdout or "--- /dev/null\n" in result.stdout
    clean = tmp_path / "clean"
    shutil.copytree(root, clean)
    subprocess.run(["git", "init", "-q", str(clean)], check=True)
    # (paths in the diff are relative to the working directory or absolute: rewrite them to the copy's)
    patch = result.stdout.replace(f"a/{root.as_posix()}/", "a/").replace(f"b/{root.as_posix()}/", "b/")
    applied = subprocess.run(["git", "-C", str(clean), "apply", "-"], input=patch, text=True, capture_output=True)
    assert applied.returncode == 0, applied.stderr + patch[:2000]
    assert_shared(clean)
    write_back = write(tmp_path / "other", PROJECT)
    assert invoke(str(write_back), "-j", "1", "--no-git").exit_code == 0
    for name in [*PROJECT, SHARED]:
        assert (clean / name).read_bytes() == (write_back / name).read_bytes(), name


def test_git_commits_the_module_with_the_attention_domain(tmp_path):
    repo = make_repo(tmp_path / "repo", PROJECT)
    result = invoke(str(repo), "-j", "1")
    assert result.exit_code == 0, result.output
    assert_shared(repo)
    assert git(repo, "status", "--porcelain") == ""
    log = git(repo, "log", "--format=%h %s", "main..HEAD").splitlines()
    assert len(log) == 2 and "NPU1xx" in log[1] and "NPU4xx" in log[0], log
    device, attention = log[1].split()[0], log[0].split()[0]
    assert SHARED in git(repo, "show", "--name-only", "--format=", attention).splitlines()
    assert SHARED not in git(repo, "show", "--name-only", "--format=", device).splitlines()
    # Every commit of an importing file imports the helpers instead of defining them (no inline step in between).
    for commit in (device, attention):
        assert "def _npu_flash_attn" not in git(repo, "show", f"{commit}:pkg/sub/c.py")
    diff = (repo / ".ascend-port" / "ascend-port-npu" / f"{SHARED}.diff").read_text()
    assert diff.startswith(f"--- /dev/null\n+++ b/{SHARED}\n")
    run_ported_package(repo)


def test_review_derives_the_module_from_the_accepted_files(tmp_path):
    # All accepted: the shared module, committed like the non-interactive port.
    repo = make_repo(tmp_path / "all", PROJECT)
    assert invoke(str(repo), "-j", "1", "-i", input="y\n" * 40).exit_code == 0
    assert_shared(repo)
    # Only pkg/a.py accepted (files are reviewed by path): no module whose import could dangle, the helper inline.
    repo = make_repo(tmp_path / "one", PROJECT)
    result = invoke(str(repo), "-j", "1", "-i", input="a\n" + "d\n" * 10)
    assert result.exit_code == 0, result.output
    assert not (repo / SHARED).exists()
    text = (repo / "pkg/a.py").read_text()
    assert "def _npu_flash_attn(" in text and MODULE_NAME not in text
    assert (repo / "pkg/b.py").read_text() == PROJECT["pkg/b.py"]
    # --no-git --interactive: the same.
    root = write(tmp_path / "nogit", PROJECT)
    assert invoke(str(root), "-j", "1", "--no-git", "-i", input="y\n" * 40).exit_code == 0
    assert_shared(root)


def test_one_file_and_unrelated_trees_keep_the_helper_inline(tmp_path):
    root = write(tmp_path / "one", {"model.py": PROJECT["pkg/a.py"], "data.py": "x = 1\n"})
    assert invoke(str(root), "-j", "1", "--no-git").exit_code == 0
    assert "def _npu_flash_attn(" in (root / "model.py").read_text() and not list(root.rglob(f"{MODULE_NAME}.py"))
    # Two top-level packages: the bigger one shares, the other one's module keeps its helper.
    files = {**PROJECT, "other/__init__.py": "", "other/m.py": PROJECT["pkg/a.py"]}
    root = write(tmp_path / "two", files)
    assert invoke(str(root), "-j", "1", "--no-git").exit_code == 0
    assert_shared(root)
    assert "def _npu_flash_attn(" in (root / "other/m.py").read_text()


def test_scripts_without_a_package_keep_their_helpers_inline(tmp_path):
    """No import path is certain for a folder without __init__.py (scripts, or a namespace package): a plain
    `from _ported_attention import` works only where the folder is on sys.path."""
    for layout in (
        {"train.py": SCRIPT, "eval.py": SCRIPT},
        {"ns/a.py": PROJECT["pkg/a.py"], "ns/b.py": PROJECT["pkg/b.py"]},
    ):
        root = write(tmp_path / str(len(layout) + len(str(layout))), layout)
        assert invoke(str(root), "-j", "1", "--no-git").exit_code == 0
        assert not list(root.rglob(f"{MODULE_NAME}.py"))
        for name in layout:
            assert "def _npu_flash_attn(" in (root / name).read_text()


def test_a_user_file_of_that_name_is_never_overwritten(tmp_path):
    root = write(tmp_path / "proj", {**PROJECT, SHARED: "VALUE = 1\n"})
    result = invoke(str(root), "-j", "1", "--no-git")
    assert result.exit_code == 0, result.output
    assert (root / SHARED).read_text() == "VALUE = 1\n"
    assert "not written by ascend-port" in " ".join(result.output.split())
    assert "def _npu_flash_attn(" in (root / "pkg/a.py").read_text()


def test_replace_block_keeps_the_layout_around_it():
    ported = (
        "import torch\nimport torch_npu\n\nq = torch.ones(1)\n\n\n_NPU_ATTENTION_MASKS = {}\n\n\n"
        'def _npu_flash_attn(q, k, v):\n    """x (written by ascend-port, rules NPU400-NPU405)."""\n\n\n'
        "print(_npu_flash_attn(q, q, q))\n"
    )
    assert find_block(ported) is not None
    assert replace_block(ported, "_m") == (
        "import torch\nimport torch_npu\nfrom _m import _npu_flash_attn\n\nq = torch.ones(1)\nprint(_npu_flash_attn(q, q, q))\n"
    )
    # A helper the user wrote (no credit line) is not the port's: left alone.
    assert find_block(ported.replace("written by ascend-port", "mine")) is None


@pytest.mark.parametrize("calls", [True, False])
def test_npu600_says_npu_fusion_attention_replaces_flash_attn_only_where_a_call_was_replaced(tmp_path, calls):
    from ascend_port.core.cuda_packages import FLASH_REASON, FLASH_REASON_UNPORTED

    model = PROJECT["pkg/a.py"] if calls else "import torch\n\n\ndef f(x):\n    return x.cuda()\n"
    root = write(tmp_path / "proj", {"model.py": model, "requirements.txt": "torch\nflash-attn==2.6.3\n"})
    result = invoke(str(root), "-j", "1", "--dry-run", "--exit-zero")
    assert result.exit_code == 0, result.output
    requirements = result.stdout.split("requirements.txt")[-1]
    assert (FLASH_REASON in requirements) is calls and (FLASH_REASON_UNPORTED in requirements) is not calls
    assert invoke(str(root), "-j", "1", "--no-git").exit_code == 0
    assert (FLASH_REASON in (root / "requirements.txt").read_text()) is calls


def test_the_module_never_goes_above_the_paths_given(tmp_path):
    sub = {"pkg/sub/d.py": PROJECT["pkg/a.py"], "pkg/sub/e.py": PROJECT["pkg/b.py"]}
    root = write(tmp_path / "proj", {**PROJECT, **sub})
    result = invoke(str(root / "pkg" / "sub"), "-j", "1", "--no-git")
    assert result.exit_code == 0, result.output
    assert not list(root.rglob(f"{MODULE_NAME}.py")) and "above the paths given" in " ".join(result.output.split())
    assert all("def _npu_flash_attn(" in (root / name).read_text() for name in sub)
    # Files given one by one: the module goes to their folder.
    root = write(tmp_path / "files", PROJECT)
    assert invoke(str(root / "pkg/a.py"), str(root / "pkg/b.py"), "-j", "1", "--no-git").exit_code == 0
    assert (root / SHARED).exists() and IMPORTS["pkg/a.py"] in (root / "pkg/a.py").read_text()


XFORMERS = """\
import xformers.ops as xops


def attend(q, k, v):
    return xops.memory_efficient_attention(q, k, v)
"""

PADDING = """\
import torch
from flash_attn.bert_padding import pad_input, unpad_input


def forward(x, mask):
    x_unpad, indices, cu_seqlens, max_s = unpad_input(x, mask)
    return pad_input(x_unpad * 2, indices, x.shape[0], x.shape[1])
"""


def test_xformers_and_padding_helpers_are_shared_with_what_they_call(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/x.py": XFORMERS, "pkg/y.py": XFORMERS, "pkg/p.py": PADDING}
    files["pkg/q.py"] = PADDING
    root = write(tmp_path / "proj", files)
    result = invoke(str(root), "-j", "1", "--no-git")
    assert result.exit_code == 0, result.output
    module = (root / SHARED).read_text()
    for name in ("_npu_flash_attn", "_npu_memory_efficient_attention", "_npu_unpad_input", "_npu_pad_input"):
        assert module.count(f"def {name}(") == 1, name
    assert f"from .{MODULE_NAME} import _npu_memory_efficient_attention\n" in (root / "pkg/x.py").read_text()
    assert f"from .{MODULE_NAME} import _npu_unpad_input, _npu_pad_input\n" in (root / "pkg/p.py").read_text()
    compile(module, SHARED, "exec")
    again = invoke(str(root), "-j", "1", "--dry-run")
    assert again.exit_code == 0 and "---" not in again.stdout, again.output


SPLIT = """\
import torch
from flash_attn import flash_attn_func

SCALE = 1


def other():
    return 1


def attend(q, k, v):
    \"\"\"Attend.

    A docstring long enough
    to put the call
    in a hunk of its own.
    \"\"\"
    return flash_attn_func(q, k, v)
"""


def test_an_accepted_call_brings_its_helper_with_it(tmp_path):
    root = write(tmp_path / "proj", {"m.py": SPLIT})
    result = invoke(str(root), "-j", "1", "--no-git", "-i", input="n\ny\n")  # the helper's hunk refused, the call's not
    assert result.exit_code == 0, result.output
    assert "the helper _npu_flash_attn is applied too" in " ".join(result.output.split())
    text = (root / "m.py").read_text()
    assert text.count("def _npu_flash_attn(") == 1 and "return _npu_flash_attn(q, k, v)" in text


def test_an_earlier_module_is_extended_never_replaced_by_a_smaller_one(tmp_path):
    from ascend_port.core.selection import Selection
    from ascend_port.port.handlers import handler_for
    from ascend_port.rules.attention.shared import plan

    first = write(tmp_path / "first", PROJECT)
    assert invoke(str(first), "-j", "1", "--no-git").exit_code == 0
    root = write(tmp_path / "proj", {"pkg/__init__.py": "", "pkg/p.py": PADDING, "pkg/q.py": PADDING})
    (root / SHARED).write_bytes((first / SHARED).read_bytes())  # what an earlier run wrote: the flash helper
    texts = []
    for name in ("pkg/p.py", "pkg/q.py"):
        path = (root / name).resolve()
        texts.append((path, handler_for(path).port(PADDING.encode(), Selection(), PortOptions()).new_text or ""))
    (module,) = plan(texts, "torch_npu", [root.resolve()]).modules
    assert module.existing and module.path == (root / SHARED).resolve()
    for name in ("_npu_flash_attn", "_npu_unpad_input", "_npu_pad_input"):
        assert module.text.count(f"def {name}(") == 1, name
    assert module.rewrite(texts[0][0], texts[0][1].encode()).count(b"def _npu_") == 0


MIXED = """\
import torch
from flash_attn import flash_attn_func
from flash_attn.bert_padding import pad_input, unpad_input


def forward(x, mask):
    x_unpad, indices, cu_seqlens, max_s = unpad_input(x, mask)
    return pad_input(x_unpad * 2, indices, x.shape[0], x.shape[1])


class Attention:
    def attend(self, q, k, v):
        return flash_attn_func(q, k, v)
"""


def test_helpers_written_in_two_places_of_a_module_are_all_moved(tmp_path):
    root = write(tmp_path / "proj", {"pkg/__init__.py": "", "pkg/m.py": MIXED, "pkg/n.py": MIXED})
    inline = write(tmp_path / "one", {"m.py": MIXED})
    assert invoke(str(inline), "-j", "1", "--no-git").exit_code == 0
    assert (inline / "m.py").read_text().count("\ndef _npu_") == 3  # (two runs of helpers, in front of each user)
    assert invoke(str(root), "-j", "1", "--no-git").exit_code == 0
    text = (root / "pkg/m.py").read_text()
    assert "def _npu_" not in text and "_NPU_ATTENTION_MASKS" not in text
    assert f"from .{MODULE_NAME} import _npu_flash_attn, _npu_unpad_input, _npu_pad_input\n" in text
    ast.parse(text)
    assert invoke(str(root), "-j", "1", "--dry-run").stdout == ""
