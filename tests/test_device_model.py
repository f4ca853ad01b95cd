"""The device model (python/device_model.py): which code serves which device, read before any rewrite, and how a
run treats per-device module families (DeepSpeed's accelerators, comm backends, op-builder folders)."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from ascend_port.python import device_model
from ascend_port.run.engine import RunConfig, run

CUDA_MEMBER = """\
import torch


class CUDA_Accelerator:
    def device_name(self):
        return "cuda"

    def synchronize(self):
        return torch.cuda.synchronize()

    def communication_backend_name(self):
        return "nccl"
"""
OTHER_MEMBER = """\
import torch


class HPU_Accelerator:
    def visible_devices_envs(self):
        return ["CUDA_VISIBLE_DEVICES"]  # a vendor that reuses CUDA's names: theirs, not ours

    def synchronize(self):
        return torch.cuda.synchronize()
"""


@pytest.mark.parametrize(
    ("name", "devices"),
    [
        ("is_torch_npu_available", {"npu"}),
        ("HPU_Accelerator", {"hpu"}),
        ("MPSBackend", {"mps"}),
        ("use_cuda_graphs", {"cuda"}),
        ("capture", set()),
        ("cudnn_benchmark", set()),  # a word that starts with a device name is not one
    ],
)
def test_device_words_of_identifiers(name: str, devices: set[str]) -> None:
    assert device_model.words(name) == devices


@pytest.mark.parametrize(
    ("text", "names_another_device"),
    [
        ("y = layer(input, output) + relationship", False),  # (npu, tpu, hip inside words: no device word)
        ("x = self.inNPU", True),  # (a capital starts a word inside an identifier)
        ("x = input_npu", True),
        ("x = 3npu", True),
        ("x = a3npu", True),
        ("x = ouTpuTx", True),
        ("x = NPUs", False),  # (`NP` + `Us`, as words() splits it)
        ("x = TPUStrategy", True),
        ("x = torchNpu", True),
        ("x = \u0130npu_x", True),  # (lower() lengthens İ: the identifiers are read one by one)
    ],
)
def test_a_module_may_keep_code_only_when_an_identifier_names_another_device(
    text: str, names_another_device: bool
) -> None:
    identifiers = set(device_model._IDENTIFIER.findall(text))
    assert any(device_model.words(i) - {"cuda", "cpu"} for i in identifiers) == names_another_device
    assert device_model.may_keep_anything(text) == names_another_device


def test_dispatch_spans() -> None:
    source = textwrap.dedent(
        """\
        if torch.cuda.is_available():          # 1: a CUDA branch of a chain without npu: forked
            d = "cuda"
        elif torch.backends.mps.is_available():  # 3: another vendor's branch: kept
            d = "mps"
        else:                                  # 5: the fallback: kept
            d = "cpu"
        g = 0
        if torch.cuda.is_available():          # 8: cuda or cpu only: ported as before
            e = "cuda"
        else:
            e = "cpu"
        g = 1
        if x.is_npu:                           # 13: the NPU is handled: all kept
            f = "npu"
        elif x.is_cuda:
            f = "cuda"
        g = 2
        if torch.xpu.is_available():           # 18: a run of `if` statements is a chain too
            h = "xpu"
        if torch.cuda.is_available():          # 20: forked
            h = "cuda"
        """
    )
    model = device_model.read(ast.parse(source))
    assert model.fork_at(1) is not None and not model.keeps(2)
    assert all(model.keeps(line) for line in (3, 4, 6))
    assert not any(model.keeps(line) for line in (8, 9, 11)) and model.fork_at(8) is None
    assert all(model.keeps(line) for line in range(13, 17))
    assert model.keeps(18) and model.fork_at(20) is not None


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")


def test_a_family_with_an_npu_member_keeps_every_member(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "accelerator/cuda_accelerator.py": CUDA_MEMBER,
            "accelerator/hpu_accelerator.py": OTHER_MEMBER,
            "accelerator/cpu_accelerator.py": OTHER_MEMBER.replace("HPU", "CPU"),
            "accelerator/npu_accelerator.py": "import torch\n\nx = torch.cuda.is_available()  # (left as it is)\n",
            "comm/nccl.py": "import torch.distributed as dist\n\ndist.init_process_group('nccl')\n",
            "comm/hccl.py": "import torch.distributed as dist\n\ndist.init_process_group('hccl')\n",
            "op_builder/hpu/builder.py": "import torch\n\nok = torch.cuda.is_available()\n",
            "train.py": "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\n",
        },
    )
    result = run([tmp_path], RunConfig(cache=False))
    # (a project with an NPU member supports the NPU: the rest is reported, but for its CUDA islands, NPU122)
    assert [file.path for file in result.changed] == [f"{tmp_path}/train.py"]
    assert not [f for file in result.files for f in file.findings if "accelerator" in file.path or "comm" in file.path]
    [train] = [file for file in result.files if file.path.endswith("train.py")]
    assert [(f.rule.id, f.applied) for f in train.findings] == [("NPU122", True)]
    # the summary says what changed and why the rest does not, and how to make an NPU-only fork
    [note] = [n for n in result.notes if "supports the NPU already" in n]
    assert "npu_accelerator.py shows it" in note and "--other-devices drop" in note
    assert "1 CUDA call outside its device dispatch made device-neutral (NPU122" in note


def test_a_family_without_an_npu_member_is_reported_not_edited(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {"accelerator/cuda_accelerator.py": CUDA_MEMBER, "accelerator/hpu_accelerator.py": OTHER_MEMBER},
    )
    result = run([tmp_path], RunConfig(cache=False))
    assert not result.changed
    cuda = next(f for f in result.files if f.path.endswith("cuda_accelerator.py"))
    [finding] = cuda.findings
    assert finding.rule.id == "NPU121" and not finding.applied and "cuda,hpu" in finding.message


def test_a_lone_cuda_and_cpu_pair_is_not_a_family(tmp_path: Path) -> None:
    """test_cuda.py beside test_cpu.py: CUDA and the CPU fallback are not several devices; the CUDA file is ported."""
    _tree(
        tmp_path, {"tests/test_cuda.py": "import torch\n\nx = torch.ones(1).cuda()\n", "tests/test_cpu.py": "x = 1\n"}
    )
    result = run([tmp_path], RunConfig(cache=False))
    assert [Path(f.path).name for f in result.changed] == ["test_cuda.py"]


def test_the_family_is_part_of_the_cache_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same bytes are ported as a lone module and kept as the CUDA member of a family with an NPU member."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _tree(tmp_path, {"alone/cuda_accelerator.py": CUDA_MEMBER, "family/cuda_accelerator.py": CUDA_MEMBER})
    assert len(run([tmp_path / "alone"], RunConfig()).changed) == 1
    _tree(tmp_path, {"family/npu_accelerator.py": "x = 1\n", "family/xpu_accelerator.py": "x = 1\n"})
    assert not run([tmp_path / "family"], RunConfig()).changed


@pytest.mark.parametrize(
    ("files", "supports"),
    [
        ({"accelerator/npu_accelerator.py": "x = 1\n"}, True),
        ({"ops/npu/kernels.py": "x = 1\n"}, True),
        ({"utils.py": "from transformers.utils import is_torch_npu_available\n"}, True),
        ({"utils.py": "try:\n    import torch_npu\nexcept ImportError:\n    pass\n"}, True),
        ({"utils.py": "if npu_wanted():\n    import torch_npu\n"}, True),
        # what the port itself writes is no sign: a ported CUDA project stays a CUDA project on a second run
        ({"train.py": "import torch\nimport torch_npu\n\nx = torch.ones(1).npu()\n"}, False),
        ({"attn.py": "def _npu_flash_attn(q, k, v):\n    return q\n\n\ndef _npu_pad_input(x):\n    return x\n"}, False),
        (
            {
                "utils.py": "try:\n    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is "
                "installed)\nexcept ImportError:\n    pass\n"
            },
            False,
        ),
        ({"train.py": "import torch\n\nx = torch.ones(1).cuda()\n"}, False),
        ({"model.py": "def get_input_embeddings(self):\n    return self.inputs\n"}, False),  # (in-p-u-t)
        ({"npu.py": "def to_npu(x):\n    return x\n"}, True),
    ],
)
def test_projects_that_support_the_npu(tmp_path: Path, files: dict[str, str], supports: bool) -> None:
    _tree(tmp_path, files)
    assert device_model.supports_npu(str(p) for p in tmp_path.rglob("*.py")) is supports


NPU_AWARE_MODULE = """\
import torch

NCCL_BACKEND = "nccl"


def is_cuda_available():
    return torch.cuda.is_available()


class CUDAOpBuilder:
    def is_compatible(self):
        return torch.cuda.is_available()


def report(accelerator):
    assert accelerator.device_name() == "cuda", "GDS needs CUDA"
    if accelerator.communication_backend_name() == "nccl":
        print("see the NCCL documentation")
    cuda_available = torch.cuda.is_available()
    return cuda_available


def warm_up():
    stream = torch.cuda.Stream()
    torch.cuda.synchronize()
    return stream
"""


def test_a_project_that_supports_the_npu_is_reported_not_rewritten(tmp_path: Path) -> None:
    """Its CUDA questions, settings and CUDA-named classes are CUDA's on purpose and stay silent; the rest of its CUDA
    code is reported, not rewritten (a rewrite in place would take a working path from its other devices), and so
    are its project files. The same module in a CUDA-only project is ported throughout."""
    requirements = "torch\ntriton==2.1.0\n"
    _tree(
        tmp_path / "aware",
        {"lib/core.py": NPU_AWARE_MODULE, "lib/npu_support.py": "x = 1\n", "requirements.txt": requirements},
    )
    _tree(tmp_path / "cuda_only", {"lib/core.py": NPU_AWARE_MODULE, "requirements.txt": requirements})
    aware = run([tmp_path / "aware"], RunConfig(cache=False))
    reported = {(Path(f.path).name, x.line, x.rule.id) for f in aware.files for x in f.findings if not x.applied}
    ported = [(Path(f.path).name, x.line, x.rule.id) for f in aware.files for x in f.findings if x.applied]
    warm_up = NPU_AWARE_MODULE.splitlines().index("def warm_up():") + 1
    # but for its CUDA island, made device-neutral (NPU122): a stream has no device-neutral spelling
    [core] = aware.changed
    assert ported == [("core.py", warm_up + 2, "NPU122")] and "torch.accelerator.synchronize()" in core.diff.decode()
    assert ("core.py", warm_up + 1, "NPU106") in reported
    assert not {line for name, line, _ in reported if name == "core.py" and line < warm_up}  # CUDA's: silent
    assert any(name == "requirements.txt" for name, _, _ in reported)
    plain = {
        Path(f.path).name: f.new_bytes.decode() for f in run([tmp_path / "cuda_only"], RunConfig(cache=False)).changed
    }
    assert 'NCCL_BACKEND = "hccl"' in plain["core.py"] and "torch-npu" in plain["requirements.txt"]


def test_other_devices_drop_ports_such_a_project_in_place(tmp_path: Path) -> None:
    from ascend_port.run import config

    _tree(tmp_path, {"lib/core.py": NPU_AWARE_MODULE, "lib/npu_support.py": "x = 1\n"})
    keep = config.resolve([tmp_path], {"other-devices": "keep"}).run_config()
    drop = config.resolve([tmp_path], {"other-devices": "drop"}).run_config()
    [kept] = run([tmp_path], replace(keep, cache=False)).changed
    assert "torch.accelerator.synchronize()" in kept.new_bytes.decode()  # (NPU122: the island, device-neutral)
    [core] = run([tmp_path], replace(drop, cache=False)).changed
    assert "torch.npu.synchronize()" in core.new_bytes.decode()
    with pytest.raises(config.ConfigError, match="--other-devices: 'all' is not one of keep, drop"):
        config.resolve([tmp_path], {"other-devices": "all"})
    (tmp_path / "pyproject.toml").write_text('[tool.ascend-port]\nother-devices = "drop"\n', "utf-8")
    assert 'other-devices = "drop"' in config.render(config.resolve([tmp_path]))


def _golden_inputs() -> list[Path]:
    return sorted((Path(__file__).parent.parent / "golden").rglob("*.in.py"))


@pytest.mark.parametrize("path", _golden_inputs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_model_of_the_statements_that_name_a_device_is_the_whole_model(path: Path) -> None:
    # With its source, the model reads only the top-level statements whose lines name another device (or CUDA as a
    # dict key, or device_types), and the `if`s of module-level runs: what it keeps, forks and leaves by hand is what
    # reading every statement finds.
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        pytest.skip("not Python this interpreter reads")
    whole, pruned = device_model.read(tree), device_model.read(tree, text=text)
    assert (pruned.kept, pruned.forks, pruned.todo) == (whole.kept, whole.forks, whole.todo)


def test_an_npu_aware_project_reroutes_triton_libdevice(tmp_path: Path) -> None:
    """In a project that supports the NPU already, the libdevice reroutes (whose last fallback is CUDA's import) are
    made, and the note says which; the rest is reported."""
    kernel = (
        "import triton\nimport triton.language as tl\nfrom triton.language.extra.cuda import libdevice\n\n\n"
        "@triton.jit\ndef k(X):\n    tl.store(X, tl.extra.cuda.libdevice.tanh(tl.load(X)) + libdevice.exp(1.0))\n"
    )
    _tree(tmp_path, {"ops.py": kernel, "utils.py": "def is_npu_available():\n    return False\n"})
    result = run([tmp_path], RunConfig(cache=False))
    [ops] = result.changed
    assert ops.path.endswith("ops.py") and {f.rule.id for f in ops.findings if f.applied} == {"NPU501", "NPU508"}
    [note] = [n for n in result.notes if "supports the NPU already" in n]
    assert "leave CUDA's code as it runs (NPU501 triton-libdevice, NPU508 triton-libdevice-chain)" in note
    _tree(tmp_path, {"ops.py": "import torch\n\nx = torch.ones(1).cuda()\n"})
    [note] = [n for n in run([tmp_path], RunConfig(cache=False)).notes if "supports the NPU already" in n]
    assert "as it runs" not in note  # (nothing of the kind to say)
