"""Helpers for the git workflow tests: a real temporary repository holding a small CUDA project, and two test-only
rules in other domains (so the per-domain commit layout is tested independently of the real NPU2xx/NPU5xx rules)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.core.catalogue import Confidence, Rule
from ascend_port.python.transformer import PortTransformer

# Test-only rules: never registered in the catalogue, only in the transformer list while a test runs.
FAKE_DIST = Rule("NPU298", "test-dist-call", Confidence.HIGH, "test rule", "Before:\n    a\nAfter:\n    b")
FAKE_KERNEL = Rule("NPU598", "test-kernel", Confidence.LOW, "test rule", "Before:\n    a\nAfter:\n    b")


class FakeDomains(PortTransformer):
    TRIGGERS = (r"\bfake_dist_call\b", r"\bfake_kernel\b")
    RULES = (FAKE_DIST, FAKE_KERNEL)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if original.value == "fake_dist_call":
            return (
                self.fix(
                    FAKE_DIST,
                    original,
                    updated.with_changes(value="fake_hccl_call"),
                    "fake_dist_call -> fake_hccl_call",
                )
                or updated
            )
        if original.value == "fake_kernel":
            self.todo(FAKE_KERNEL, original, "fake_kernel needs a hand port")
        return updated


@pytest.fixture
def fake_domains(monkeypatch: pytest.MonkeyPatch, private_cache: Path) -> None:
    import ascend_port.port.python as python

    monkeypatch.setattr(python, "TRANSFORMERS", (*python.TRANSFORMERS, FakeDomains))


@pytest.fixture
def private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A result cache of the test's own (also for the commands it spawns): results made with the test-only rules
    must never be seen by another run, and the user's cache is left alone."""
    folder = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder


TRAIN = """\
import torch

model = torch.nn.Linear(2, 2).cuda()

fake_dist_call()


def step(x):
    y = fake_kernel(x)
    torch.cuda.synchronize()
    return y
"""

# After each domain's commit (the device commit adds the import and the .npu()/torch.npu rewrites, ...).
TRAIN_DEVICE = (
    TRAIN.replace("import torch\n", "import torch\nimport torch_npu\n")
    .replace(".cuda()", ".npu()")
    .replace("torch.cuda.synchronize", "torch.npu.synchronize")
)
TRAIN_DIST = TRAIN_DEVICE.replace("fake_dist_call", "fake_hccl_call")
TRAIN_KERNEL = TRAIN_DIST.replace(
    "    y = fake_kernel(x)",
    "    # TODO(ascend-port): NPU598 [low] fake_kernel needs a hand port\n    y = fake_kernel(x)",
)

DIST_ONLY = "import torch\n\nfake_dist_call()\n"
DIST_ONLY_PORTED = "import torch\nimport torch_npu\n\nfake_dist_call()\n".replace("fake_dist_call", "fake_hccl_call")

PLAIN = "x = 1\n"


def git(repo: Path, *args: str, check: bool = True) -> str:
    result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    if check and result.returncode:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.stdout.strip()


def make_repo(root: Path, files: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for key, value in (("user.name", "Test"), ("user.email", "test@example.com"), ("commit.gpgsign", "false")):
        git(root, "config", key, value)
    for name, text in (files or {"train.py": TRAIN, "pkg/dist_only.py": DIST_ONLY, "plain.py": PLAIN}).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the CUDA project")
    return root


def state(repo: Path) -> dict[str, object]:
    """Everything the tool must not change on failure: HEAD, branches, status, index and file bytes."""
    files = {
        p.relative_to(repo).as_posix(): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo).parts and ".ascend-port" not in p.parts
    }
    return {
        "head": git(repo, "symbolic-ref", "-q", "HEAD", check=False) or git(repo, "rev-parse", "HEAD"),
        "refs": git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"),
        "status": git(repo, "status", "--porcelain"),
        "index": git(repo, "ls-files", "-s"),
        "files": files,
    }


def invoke(*args: str, input: str | None = None):
    env = {"NO_COLOR": "1", "COLUMNS": "200"}
    return CliRunner().invoke(app, ["apply", *args], input=input, env=env)


def flat(text: str) -> str:
    """Output with rich's line wrapping undone, for substring checks."""
    return " ".join(text.split())


def editor_script(tmp_path: Path, python_code: str) -> str:
    """An $EDITOR that runs ``python_code`` with ``path`` bound to the file to edit."""
    script = tmp_path / "editor.py"
    script.write_text("import sys\npath = sys.argv[1]\n" + python_code)
    return f"{sys.executable} {script}"
