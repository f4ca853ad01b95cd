"""ascend-port emulate: scripts run under the emulated npu device (subprocesses of the real CLI)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import pytest

pytest.importorskip("torch")

from emulation import CLI, check, needs_compiler, run

EMULATE_DIR = Path(__file__).resolve().parent.parent / "ascend_port" / "emulate"


def emulate(tmp_path: Path, code: str, *options: str, command: list[str] | None = None, timeout: int = 300):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code), "utf-8")
    argv = [*CLI, "emulate", *options, "--", *(command or [sys.executable]), str(script)]
    return run(argv, timeout=timeout, cwd=tmp_path)


@pytest.fixture(scope="module", autouse=True)
def built_device(tmp_path_factory):
    """The native device is compiled once (cached under ~/.cache/ascend-port): the first run pays."""
    needs_compiler()
    check(emulate(tmp_path_factory.mktemp("build"), "import torch_npu\n", timeout=600))


def test_device_basics(tmp_path):
    out = emulate(
        tmp_path,
        """
        import torch, torch_npu
        x = torch.randn(2, 3, device="npu")
        y = torch.ones(2, 3).npu()
        z = torch.zeros(2, 3).to("npu")
        assert x.is_npu and y.device == torch.device("npu", 0) and z.device.type == "npu"
        assert torch.equal((y + z).cpu(), torch.ones(2, 3))
        assert torch.equal(y.t().contiguous().cpu(), torch.ones(3, 2)) and not y.t().is_contiguous()
        w = y.to("npu:1")
        assert w.device == torch.device("npu:1") and (w * 2).device == torch.device("npu:1")
        assert torch.empty(4, device=torch.device("npu", 1)).device.index == 1
        out = torch.empty(0, device="npu"); torch.add(y, y, out=out)
        assert out.shape == (2, 3) and torch.equal(out.cpu(), torch.full((2, 3), 2.0))
        print("ok", torch.npu.device_count())
        """,
        "--devices",
        "2",
    )
    assert check(out).split() == ["ok", "2"]


def test_training_matches_cpu(tmp_path):
    out = emulate(
        tmp_path,
        """
        import torch, torch_npu

        def train(device):
            torch.manual_seed(0)
            model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16),
                                        torch.nn.Linear(16, 4)).to(device)
            opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
            x = torch.randn(32, 8, device=device)
            target = torch.randint(0, 4, (32,), device=device)
            for _ in range(3):
                opt.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x), target)
                loss.backward()
                opt.step()
            return loss.detach().cpu(), [p.detach().cpu() for p in model.parameters()]

        cpu_loss, cpu_params = train("cpu")
        npu_loss, npu_params = train("npu")
        assert torch.allclose(cpu_loss, npu_loss, atol=1e-6, rtol=0), (cpu_loss, npu_loss)
        for a, b in zip(cpu_params, npu_params):
            assert torch.allclose(a, b, atol=1e-6, rtol=0)
        model = torch.nn.Linear(2, 2).npu()
        assert next(model.parameters()).device.type == "npu"
        print("equal")
        """,
    )
    assert check(out).strip() == "equal"


def test_load_map_location_and_seed(tmp_path):
    out = emulate(
        tmp_path,
        """
        import torch, torch_npu
        torch.save({"w": torch.arange(6.0).reshape(2, 3)}, "ck.pt")
        w = torch.load("ck.pt", map_location="npu:0")["w"]
        assert w.device == torch.device("npu:0") and torch.equal(w.cpu(), torch.arange(6.0).reshape(2, 3))
        model = torch.nn.Linear(3, 1)
        torch.save(model.state_dict(), "m.pt")
        model.npu().load_state_dict(torch.load("m.pt", map_location="npu"))
        torch.manual_seed(123); a = torch.randn(5, device="npu")
        torch.manual_seed(123); b = torch.randn(5, device="npu")
        torch.manual_seed(123); c = torch.randn(5)
        assert torch.equal(a.cpu(), b.cpu()) and torch.equal(a.cpu(), c)
        print("ok")
        """,
    )
    assert check(out).strip() == "ok"


def test_torch_npu_functions(tmp_path):
    report = tmp_path / "report.json"
    out = emulate(
        tmp_path,
        """
        import torch, torch_npu
        npu = torch.npu
        assert npu is torch_npu.npu and npu.is_available() and npu.device_count() == 2
        npu.set_device(1); assert npu.current_device() == 1
        npu.set_device("npu:0"); assert npu.current_device() == 0
        npu.synchronize(); npu.empty_cache()
        assert npu.max_memory_allocated() >= npu.memory_allocated() >= 0
        npu.reset_peak_memory_stats(); npu.manual_seed(1); npu.manual_seed_all(1)
        assert npu.get_device_capability() is None and npu.is_bf16_supported() is True
        assert "emulated" in npu.get_device_name()
        s = npu.Stream()
        with npu.stream(s):
            e = npu.Event(enable_timing=True); e.record(); f = npu.Event(enable_timing=True); f.record()
        assert f.elapsed_time(e) <= 0 <= e.elapsed_time(f) and npu.current_stream().query()
        x = torch.randn(4, 4, device="npu")
        with torch.autocast("npu", dtype=torch.bfloat16):
            assert (x @ x).dtype == torch.bfloat16
        with torch.autocast("npu", dtype=torch.float16):
            assert torch.nn.functional.linear(x, x).dtype == torch.float16
        model = torch.nn.Linear(4, 4).npu(); opt = torch.optim.AdamW(model.parameters())
        scaler = torch.npu.amp.GradScaler()
        with torch.npu.amp.autocast(dtype=torch.bfloat16):
            loss = model(x).float().sum()
        scaler.scale(loss).backward(); scaler.step(opt); scaler.update()
        assert torch.distributed.is_hccl_available()
        print("ok")
        """,
        "--devices",
        "2",
        "--report",
        str(report),
    )
    assert check(out).strip() == "ok"
    data = json.loads(report.read_text())
    assert data["exit_code"] == 0 and data["calls"]["torch.npu.synchronize"] == 1
    assert data["calls"]["torch.npu.amp.GradScaler"] == 1 and data["not_implemented"] == {}


def test_not_emulated_and_unknown_names(tmp_path):
    report = tmp_path / "report.json"
    out = emulate(
        tmp_path,
        """
        import torch, torch_npu
        for call in (lambda: torch.npu.NPUGraph(), lambda: torch_npu.npu_add_rms_norm_cast(None),
                     lambda: torch_npu.npu.set_option({}), lambda: torch_npu.npu_quant_matmul(None)):
            try:
                call()
            except NotImplementedError as error:
                print(error)
        for get in (lambda: torch.npu.no_such_function, lambda: torch_npu.no_such_op):
            try:
                get()
            except AttributeError:
                print("AttributeError")
        """,
        "--report",
        str(report),
    )
    assert check(out).splitlines() == [
        "torch_npu.npu.NPUGraph is not emulated by ascend-port emulate",
        "torch_npu.npu_add_rms_norm_cast is not emulated by ascend-port emulate",
        "torch_npu.npu.set_option is not emulated by ascend-port emulate",
        "torch_npu.npu_quant_matmul is not emulated by ascend-port emulate",
        "AttributeError",
        "AttributeError",
    ]
    assert json.loads(report.read_text())["not_implemented"]["torch_npu.npu.NPUGraph"] == 1


def test_fused_ops_use_reference(tmp_path):
    if not (EMULATE_DIR / "ops.py").exists():
        pytest.skip("ascend_port/emulate/ops.py is not there yet")
    out = emulate(
        tmp_path,
        """
        import torch, torch_npu
        x = torch.randn(2, 8, device="npu")
        y = torch_npu.npu_swiglu(x)
        assert y.shape == (2, 4), y.shape
        print("ok")
        """,
    )
    assert check(out).strip() == "ok"


def test_autoload_without_import(tmp_path):
    out = emulate(tmp_path, "import torch\nprint(torch.ones(1, device='npu').device)\n")
    assert check(out).strip() == "npu:0"


def test_exit_code_passthrough(tmp_path):
    check(emulate(tmp_path, "import sys\nsys.exit(3)\n"), 3)


def test_python_dash_m(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "__main__.py").write_text("import torch, torch_npu\nprint(torch.zeros(1).npu().device)\n")
    result = run([*CLI, "emulate", "--", "-m", "pkg"], cwd=tmp_path)
    assert check(result).strip() == "npu:0"


@pytest.mark.parametrize("command", [[], ["ls"], ["bash", "-c", "true"]])
def test_usage_errors(command):
    result = run([*CLI, "emulate", "--", *command])
    assert result.returncode == 2
    assert "python" in result.stderr and "torchrun" in result.stderr


def test_refuses_real_torch_npu(tmp_path, monkeypatch):
    from ascend_port.emulate import runner

    monkeypatch.setattr(runner, "real_torch_npu", lambda interpreter: "2.14.0")
    script = tmp_path / "s.py"
    script.write_text("print('ran')\n")
    assert runner.run_emulated([sys.executable, str(script)], 1, None, force=False) == 2
    monkeypatch.setattr(runner, "real_torch_npu", lambda interpreter: None)
    assert runner.real_torch_npu(sys.executable) is None


def test_cli_does_not_import_torch():
    code = "import sys, ascend_port.cli, ascend_port.emulate.runner; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_torchrun_hccl_all_reduce(tmp_path):
    torchrun = shutil.which("torchrun", path=str(Path(sys.executable).parent)) or shutil.which("torchrun")
    if torchrun is None:
        pytest.skip("torchrun is not installed")
    out = emulate(
        tmp_path,
        """
        import torch, torch_npu, torch.distributed as dist
        dist.init_process_group("hccl")
        rank = dist.get_rank()
        torch.npu.set_device(rank)
        t = torch.full((3,), float(rank + 1), device=f"npu:{rank}")
        dist.all_reduce(t)
        assert t.device == torch.device("npu", rank)
        open(f"rank{rank}.txt", "w").write(str(t.cpu().tolist()))
        dist.destroy_process_group()
        """,
        "--devices",
        "2",
        command=[torchrun, "--nproc-per-node", "2"],
    )
    check(out)
    assert [(tmp_path / f"rank{rank}.txt").read_text() for rank in (0, 1)] == ["[3.0, 3.0, 3.0]"] * 2


def test_generators_pinned_memory_and_data_loader(tmp_path):
    out = emulate(
        tmp_path,
        """
        import torch, torch_npu
        from torch.utils.data import DataLoader, TensorDataset
        g = torch.Generator(device="npu").manual_seed(3)
        a = torch.randn(4, device="npu", generator=g)
        b = torch.randn(4, generator=torch.Generator().manual_seed(3))
        assert g.device == torch.device("npu", 0) and a.device.type == "npu" and torch.equal(a.cpu(), b)
        state = g.get_state(); c = torch.rand(3, device="npu", generator=g)
        g.set_state(state); assert torch.equal(torch.rand(3, device="npu", generator=g), c)
        assert torch.ones(2).pin_memory().is_pinned() and not torch.ones(2).is_pinned()
        loader = DataLoader(TensorDataset(torch.arange(8.0).view(4, 2)), batch_size=2, pin_memory=True)
        (batch,) = next(iter(loader))
        assert batch.is_pinned() and batch.to("npu", non_blocking=True).device.type == "npu"
        print("ok")
        """,
    )
    assert check(out).strip() == "ok"


def test_memory_statistics_count_what_the_npu_holds(tmp_path):
    out = emulate(
        tmp_path,
        """
        import torch, torch_npu
        npu = torch.npu
        base = npu.memory_allocated()
        x = torch.empty(1000, device="npu")  # 4000 bytes
        y = x * 2                            # a CPU kernel's result, now an npu tensor: 4000 more
        view = y[10:]                        # a view: no new memory
        assert npu.memory_allocated() - base == 8000, npu.memory_allocated() - base
        assert npu.max_memory_allocated() >= base + 8000 and npu.memory_reserved() >= npu.memory_allocated()
        del x, y, view
        assert npu.memory_allocated() == base and npu.max_memory_allocated() >= base + 8000
        npu.reset_peak_memory_stats(); assert npu.max_memory_allocated() == base
        stats = npu.memory_stats()
        assert stats["allocated_bytes.all.current"] == base and stats["num_alloc_retries"] == 0
        on_one = torch.empty(100, device="npu:1")
        assert npu.memory_allocated(1) == 400 and npu.memory_allocated(0) == base
        props = npu.get_device_properties(0)  # only the five properties torch_npu documents
        assert props.total_memory > 0 and props.cube_core_num > 0 and not hasattr(props, "major")
        assert not hasattr(props, "multi_processor_count") and npu.is_current_stream_capturing() is False
        print("ok")
        """,
        "--devices",
        "2",
    )
    assert check(out).strip() == "ok"


def test_target_release_decides_the_api(tmp_path):
    """--torch-npu 2.8.0.post5: torch_npu.npu.mstx.range_push first shipped in 2.7.1.post11 and is missing from
    2.8.0.post5's mstx, so the stand-in of 2.8.0.post5 lacks it (AttributeError) and the report names it."""
    report = tmp_path / "report.json"
    code = """
        import torch, torch_npu
        print(torch_npu.__version__)
        try:
            torch_npu.npu.mstx.range_push("step")
            print("has range_push")
        except AttributeError:
            print("no range_push")
        """
    out = emulate(tmp_path, code, "--torch-npu", "2.8.0.post5", "--report", str(report))
    assert check(out).splitlines() == ["2.8.0.post5+emulated", "no range_push"]
    data = json.loads(report.read_text())
    assert data["torch_npu"] == "2.8.0.post5" and data["absent"] == {"torch_npu.npu.mstx.range_push": 1}
    out = emulate(tmp_path, code)
    assert check(out).splitlines()[-1] == "has range_push"


@pytest.mark.parametrize(("given", "emulated"), [("2.1.0", "2.1.0.post17"), ("2.9", "2.9.1")])
def test_target_release_is_read_as_every_command_reads_it(tmp_path, given, emulated):
    """One parser for --torch-npu (issue 32): a torch version or line names its covered release, as in check-api and
    apply (npu_api.covered_release); emulate refused both."""
    out = emulate(tmp_path, "import torch_npu; print(torch_npu.__version__)", "--torch-npu", given)
    assert check(out).strip().startswith(emulated), out.stderr


def test_summary_says_why_no_process_reported(tmp_path):
    """A Python without torch never loads the stand-in: the summary says so instead of "0 process(es) reported"
    (issue 32), and counts in words that agree with their number."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    bare = str(tmp_path / "bare" / "bin" / "python")
    out = emulate(tmp_path, "print('ran')", command=[bare])
    assert out.returncode == 0 and "ran" in out.stdout
    last = out.stderr.strip().splitlines()[-1]
    assert "no process loaded torch" in last and f"{bare} has no torch" in last, out.stderr
    out = emulate(tmp_path, "import torch_npu")
    assert "exit code 0, 1 process reported" in out.stderr, out.stderr


def test_unknown_target_release_is_a_usage_error(tmp_path):
    result = emulate(tmp_path, "print('ran')", "--torch-npu", "2.7.0")
    assert result.returncode == 2 and "ran" not in result.stdout
    assert "--torch-npu 2.7.0" in result.stderr and "2.7.1.post11" in result.stderr


def test_contract_violations_are_reported(tmp_path):
    report = tmp_path / "report.json"
    out = emulate(
        tmp_path,
        """
        import torch, torch_npu
        x = torch.randn(2, 8, device="npu")
        torch_npu.npu_rms_norm(x, torch.ones(8, device="npu"))
        try:
            torch_npu.npu_rms_norm(x, torch.ones(8, device="npu", dtype=torch.float64))
        except (TypeError, ValueError) as error:
            print(type(error).__name__)
        """,
        "--report",
        str(report),
    )
    assert check(out).strip() in ("TypeError", "OpTypeError", "ValueError", "OpContractError")
    data = json.loads(report.read_text())
    assert data["calls"]["torch_npu.npu_rms_norm"] == 2
    [(violation, count)] = data["contract_violations"].items()
    assert violation.startswith("torch_npu.npu_rms_norm: ") and count == 1


def test_a_stale_build_lock_is_cleared(tmp_path):
    """A first build killed by Ctrl-C leaves torch's build lock behind, and every later build would wait for it."""
    from ascend_port.emulate import device

    stale, fresh = tmp_path / "stale" / "lock", tmp_path / "fresh" / "lock"
    for lock in (stale, fresh):
        lock.parent.mkdir()
        lock.write_text("")
    old = time.time() - device.STALE_LOCK_SECONDS - 60
    os.utime(stale, (old, old))
    device._clear_stale_lock(stale)
    device._clear_stale_lock(fresh)  # (a build in progress elsewhere: left alone)
    assert not stale.exists() and fresh.exists()


def test_the_first_build_says_what_it_builds_and_where(tmp_path, monkeypatch, capsys):
    """The first run compiles the device for about a minute: it says so, with the time it took and the cache folder
    (issue 32: it was silent); a run that finds the build says nothing."""
    from torch.utils import cpp_extension

    from ascend_port.emulate import device

    def compile_it(name, build_directory, **_):
        (Path(build_directory) / f"{name}.so").write_bytes(b"")
        return types.SimpleNamespace(name=name)

    monkeypatch.setenv("ASCEND_PORT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cpp_extension, "load_inline", compile_it)
    monkeypatch.setattr(cpp_extension, "is_ninja_available", lambda: True)
    monkeypatch.delitem(sys.modules, device._NATIVE_NAME, raising=False)
    device._load_native()
    said = capsys.readouterr().err
    assert "building the emulated npu device once" in said and str(tmp_path / "emulate") in said
    assert re.search(r"built in \d+(\.\d)? s", said), said
    device._load_native()
    assert capsys.readouterr().err == ""


def test_spawned_workers_that_compute_are_reported_and_their_launcher_is_no_cpu_straggler(tmp_path):
    """torch.multiprocessing.spawn's workers put their tensors on the npu: they were taken for helpers (DataLoader
    workers) and not reported, and the launcher was said to have stayed on the CPU (issue 32)."""
    code = """
        import torch
        import torch.multiprocessing as mp

        def work(rank):
            x = torch.ones(4, device=f"npu:{rank}") * 2
            assert x.sum().item() == 8

        if __name__ == "__main__":
            mp.spawn(work, nprocs=2)
            print("done")
        """
    out = emulate(tmp_path, code, "--devices", "2")
    assert check(out).strip() == "done"
    assert "exit code 0, 3 processes reported" in out.stderr and "stayed on the CPU" not in out.stderr, out.stderr
