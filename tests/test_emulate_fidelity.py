"""The stand-in torch_npu behaves as the target release does (issue 26): ops bound to the schema the release's wheel
registers, ops it lacks absent, the real ops' device checks, no autoload below torch 2.5, and a report of the
program's own calls (not torch's), settings written, and processes that never used the npu."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from pathlib import Path

import pytest
from emulation import CLI, check, needs_compiler, run

from ascend_port.core import npu_api

STUB = Path(__file__).resolve().parent.parent / "ascend_port" / "emulate" / "stub" / "torch_npu"


def emulate(tmp_path: Path, code: str, *options: str):
    pytest.importorskip("torch")
    needs_compiler()
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code), "utf-8")
    return run([*CLI, "emulate", *options, "--", sys.executable, str(script)], timeout=300, cwd=tmp_path)


def _schema_module():
    spec = importlib.util.spec_from_file_location("_fidelity_schema", STUB / "_schema.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the data: read from the wheels ----------------------------------------------------------------------------------


def test_ops_come_from_the_wheel_not_the_docs():
    """The 2.14.0 wheel registers npu_add_rms_norm, npu_gelu and npu_deep_norm (undocumented in its op docs)."""
    ops = npu_api.names("ops", "2.14.0")
    assert {"npu_add_rms_norm", "npu_gelu", "npu_deep_norm", "npu_gemma_rms_norm"} <= ops
    assert "npu_gemma_rms_norm" not in npu_api.names("ops", "2.2.0.post2")
    assert "npu_gelu" not in npu_api.names("ops", "2.2.0.post2")


def test_release_schemas_differ_where_the_wheels_do():
    old, new = (npu_api.op_schema("npu_fusion_attention", v) for v in ("2.2.0.post2", "2.14.0"))
    assert old and "softmax_layout" not in old and "int inner_precise=0" in old
    assert new and 'str softmax_layout=""' in new
    assert (
        npu_api.op_schema("npu_rotary_mul", "2.2.0.post2")
        == "npu_rotary_mul(Tensor self, Tensor r1, Tensor r2) -> Tensor"
    )
    inventory = npu_api.release_inventory("2.2.0.post2")
    assert inventory["torch_version"] == "2.2.0" and "npu_fusion_attention" in inventory["schemas"]


def test_schema_binding_as_torch_binds():
    torch = pytest.importorskip("torch")
    schema = _schema_module()
    text = "npu_swiglu(Tensor self, int dim=-1, *, bool sync=False) -> Tensor"
    x = torch.ones(2)
    assert schema.bind(text, (x,), {}) == {"self": x, "dim": -1, "sync": False}
    assert schema.bind(text, (x, 1), {"sync": 1})["sync"] == 1  # torch takes a number for a bool
    for args, kwargs, match in (
        ((x,), {"bogus": 1}, "Unknown keyword argument 'bogus' for operator 'npu::npu_swiglu'"),
        ((x, 1.5), {}, "Expected a value of type 'int' for argument 'dim'"),
        ((x,), {"sync": "yes"}, "Expected a value of type 'bool' for argument 'sync'"),
        ((x, 1, True), {}, "npu::npu_swiglu"),  # sync is keyword-only
        ((), {}, "npu::npu_swiglu"),
    ):
        with pytest.raises(RuntimeError, match=match) as info:
            schema.bind(text, args, kwargs)
        assert isinstance(info.value, TypeError)
    rms = "npu_rms_norm(Tensor self, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor)"
    assert schema.bind(rms, (x, x), {})["epsilon"] == 1e-06
    assert schema.bind(rms, (x, x, torch.tensor(0.5)), {})["epsilon"].item() == 0.5  # a 0-d tensor is a number
    with pytest.raises(RuntimeError, match="Expected a value of type 'float' for argument 'epsilon'"):
        schema.bind(rms, (x, x, torch.ones(2)), {})
    rotary = "npu_rotary_mul(Tensor self, Tensor r1, Tensor r2, str rotary_mode='half', int[]? p=[1, 2]) -> Tensor"
    assert schema.bind(rotary, (x, x, x), {}) == {"self": x, "r1": x, "r2": x, "rotary_mode": "half", "p": [1, 2]}


def test_schema_call_maps_the_schema_onto_the_reference():
    """The schema's ``self`` is the reference's first parameter; an argument of a later release that the reference
    lacks is dropped at its default and refused otherwise."""
    torch = pytest.importorskip("torch")
    schema = _schema_module()
    x = torch.ones(1)

    def reference(input, r1, r2, rotary_mode="half"):
        return input is x, rotary_mode

    text = "npu_rotary_mul(Tensor self, Tensor r1, Tensor r2, str rotary_mode='half', int extra=0) -> Tensor"
    assert schema.call(reference, text, (x, x, x), {"rotary_mode": "interleave"}) == (True, "interleave")
    with pytest.raises(NotImplementedError, match="the argument extra is not in this reference"):
        schema.call(reference, text, (x, x, x), {"extra": 1})


# --- the stand-in under a target release ---------------------------------------------------------------------------

PROBES = """
    import torch, torch_npu

    def attempt(label, call):
        try:
            call()
            print(label, "ok")
        except Exception as error:
            print(label, type(error).__name__, isinstance(error, RuntimeError), str(error).splitlines()[0][:140])

    q = torch.randn(1, 4, 2, 64, device="npu")
    t = torch.randn(4, 2, 64, device="npu")
    x = torch.randn(1, 2, 4, 8, device="npu")
    r = torch.randn(1, 1, 4, 8, device="npu")
    attempt("gemma", lambda: torch_npu.npu_gemma_rms_norm)
    attempt("softmax_layout", lambda: torch_npu.npu_fusion_attention(q, q, q, 2, "BSND", softmax_layout=""))
    attempt("tnd", lambda: torch_npu.npu_fusion_attention(t, t, t, 2, "TND", actual_seq_qlen=[4], actual_seq_kvlen=[4]))
    attempt("rotary_mode", lambda: torch_npu.npu_rotary_mul(x, r, r, rotary_mode="half"))
    attempt("bogus", lambda: torch_npu.npu_rms_norm(x, torch.ones(8, device="npu"), bogus=1))
    attempt("cpu", lambda: torch_npu.npu_rms_norm(x.cpu(), torch.ones(8)))
    mask = torch.zeros(4, 4, dtype=torch.bool)
    attempt("mixed", lambda: torch_npu.npu_fusion_attention(q, q, q, 2, "BSND", atten_mask=mask, sparse_mode=1))
    attempt("inner_precise", lambda: torch_npu.npu_fusion_attention(q, q, q, 2, "BSND", inner_precise=5))
    attempt("cpu_scale", lambda: torch_npu.npu_fusion_attention(q, q, q, 2, "BSND", scale=torch.tensor(0.5)))
    attempt("sync", lambda: torch_npu.npu_fusion_attention(q, q, q, 2, "BSND", sync="yes"))
    attempt("yarn", lambda: torch_npu.npu_rotary_mul(x, r.abs() + 1.0, r))
"""


def _outcomes(stdout: str) -> dict[str, str]:
    return {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in stdout.splitlines() if " " in line}


@pytest.mark.slow
def test_target_release_signatures_presence_and_checks(tmp_path):
    old = _outcomes(check(emulate(tmp_path, PROBES, "--torch-npu", "2.2.0.post2")))
    assert old["gemma"].startswith("AttributeError")
    assert old["softmax_layout"].startswith("SchemaError True Unknown keyword argument 'softmax_layout'")
    assert old["tnd"].startswith("OpContractError") and "TND" in old["tnd"]
    assert old["rotary_mode"].startswith("SchemaError True Unknown keyword argument 'rotary_mode'")
    report = tmp_path / "report.json"
    new = _outcomes(check(emulate(tmp_path, PROBES, "--report", str(report))))
    for probe in ("gemma", "softmax_layout", "tnd", "rotary_mode", "yarn", "cpu_scale"):
        assert new[probe] == "ok", (probe, new[probe])
    assert new["bogus"].startswith("SchemaError True Unknown keyword argument 'bogus'")
    assert new["cpu"].startswith("NotImplementedError True Could not run 'npu::npu_rms_norm'") and "cpu" in new["cpu"]
    assert new["mixed"].startswith("RuntimeError True torch_npu.npu_fusion_attention: Expected all tensors")
    assert "cpu and npu:0" in new["mixed"]
    assert new["inner_precise"].startswith("OpContractError") and "inner_precise" in new["inner_precise"]
    assert new["sync"].startswith("SchemaError True npu::npu_fusion_attention() Expected a value of type 'bool'")
    data = json.loads(report.read_text())
    assert any(v.startswith("torch_npu.npu_rms_norm: Could not run") for v in data["contract_violations"])


@pytest.mark.slow
def test_no_autoload_below_torch_2_5(tmp_path):
    code = """
        import torch
        print(hasattr(torch, "npu"))
        try:
            torch.ones(1, device="npu")
        except RuntimeError:
            print("no npu device")
        import torch_npu
        print(torch.ones(1, device="npu").device)
    """
    assert check(emulate(tmp_path, code, "--torch-npu", "2.4.0.post4")).split() == [
        "False",
        "no",
        "npu",
        "device",
        "npu:0",
    ]
    assert check(emulate(tmp_path, code, "--torch-npu", "2.5.1.post1")).split() == ["True", "npu:0"]


@pytest.mark.slow
def test_report_counts_the_programs_calls_and_writes(tmp_path):
    report = tmp_path / "report.json"
    code = """
        import torch, torch_npu
        torch.npu.is_available()
        # the same call made by torch's own code (as torch.compile probes the device): not the program's
        exec(compile("import torch\\nfor _ in range(5): torch.npu.is_available()\\ntorch.npu.NoSuchName if 0 else 0",
                     torch.__file__, "exec"))
        exec(compile("import torch_npu\\ntry:\\n    torch_npu.npu.Scheduling\\nexcept AttributeError: pass",
                     torch.__file__, "exec"))
        # through torch's pass-through wrappers (no_grad as a decorator): still the program's
        torch.no_grad()(lambda: torch.npu.synchronize())()
        torch.npu.matmul.allow_hf32 = True
        torch_npu.npu.config.allow_internal_format = False
        torch.npu.conv.allow_tf32 = True
        torch.npu.aclnn.allow_hf32 = False
        torch.npu.aclnn.allow_fp32 = False
        print(torch.npu.matmul.allow_hf32, torch.ones(1, device="npu").device)
    """
    result = emulate(tmp_path, code, "--report", str(report))
    assert check(result).split() == ["True", "npu:0"]
    data = json.loads(report.read_text())
    assert data["calls"]["torch.npu.is_available"] == 1 and data["torch_internal"]["torch.npu.is_available"] == 5
    assert data["calls"]["torch.npu.synchronize"] == 1 and "torch.npu.synchronize" not in data["torch_internal"]
    assert "torch_npu.npu.Scheduling" not in data["absent"]
    assert data["writes"] == {
        "torch_npu.npu.aclnn.allow_hf32": 1,
        "torch_npu.npu.config.allow_internal_format": 1,
        "torch_npu.npu.matmul.allow_hf32": 1,
    }
    assert data["absent"] == {"torch_npu.npu.aclnn.allow_fp32": 1, "torch_npu.npu.conv.allow_tf32": 1}
    assert data["stayed_on_cpu"] == 0 and "made by torch's own code" in result.stderr


@pytest.mark.slow
def test_a_process_that_stayed_on_cpu_is_reported(tmp_path):
    report = tmp_path / "report.json"
    code = """
        import torch, torch_npu
        device = "cuda" if torch.cuda.is_available() else "cpu"
        print((torch.ones(2, device=device) * 2).sum().item())
    """
    result = emulate(tmp_path, code, "--report", str(report))
    assert check(result).strip() == "4.0"
    data = json.loads(report.read_text())
    assert data["processes"] == 1 and data["stayed_on_cpu"] == 1 and data["calls"] == {}
    assert "stayed on the CPU" in result.stderr and '"cuda" if torch.cuda.is_available() else "cpu"' in result.stderr


@pytest.mark.slow
def test_a_worker_process_is_not_said_to_stay_on_cpu(tmp_path):
    """A spawned child (a DataLoader worker) imports torch, so the stand-in, but leaves the npu to the program: it
    reports only what it called (here nothing), and is never named as having stayed on the CPU."""
    report = tmp_path / "report.json"
    code = """
        import multiprocessing
        import torch

        def work(n):
            print(torch.ones(n).sum().item(), flush=True)

        if __name__ == "__main__":
            print(torch.ones(1, device="npu").device, flush=True)
            child = multiprocessing.get_context("spawn").Process(target=work, args=(2,))
            child.start()
            child.join()
    """
    result = emulate(tmp_path, code, "--report", str(report))
    assert check(result).split() == ["npu:0", "2.0"]
    data = json.loads(report.read_text())
    assert data["processes"] == 1 and data["stayed_on_cpu"] == 0, data
