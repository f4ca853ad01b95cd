"""What the tests that run `ascend-port emulate` share: the CLI, the build cache of the emulated device, and how they
run a command and read its result. Test code only."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

import pytest

CLI = [sys.executable, "-c", "import sys; from ascend_port.cli import main; sys.argv[0] = 'ascend-port'; main()"]
# The native device build, shared by every test and run (conftest gives each test its own XDG_CACHE_HOME): read at
# collection, before any test's environment is patched.
BUILD_CACHE = os.environ.get("ASCEND_PORT_CACHE_DIR") or str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ascend-port"
)


def environment() -> dict[str, str]:
    """This process's environment, with the shared build cache, and this interpreter's folder first on PATH: a
    command's `python` (verify's configured commands, the kit's) is the interpreter with torch, as in an activated
    virtualenv (CI runs `.venv/bin/python -m pytest` without activating it)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {**os.environ, "ASCEND_PORT_CACHE_DIR": BUILD_CACHE, "PATH": path}


# What a process of a gloo process group sometimes prints as it aborts at interpreter exit, after its work and its
# results (a thread of torch's still joinable at exit; seen a few times in a hundred two-process runs on a loaded
# machine, on the unported originals as on the ports): nothing the port does.
TEARDOWN_ABORT = "terminate called without an active exception"


def run(
    argv: list[str], cwd: Path | None = None, timeout: int = 600, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``argv``'s run, its output captured; a run that ends in TEARDOWN_ABORT is started once more (any other
    failure stands, and so does that one the second time)."""
    for _ in range(2):
        result = subprocess.run(
            argv, capture_output=True, text=True, env=dict(env or environment()), cwd=cwd, timeout=timeout
        )
        if not result.returncode or TEARDOWN_ABORT not in result.stdout + result.stderr:
            break
        print(f"{' '.join(argv[:3])}...: {TEARDOWN_ABORT} at exit: run once more")
    return result


def check(result: subprocess.CompletedProcess, code: int = 0) -> str:
    assert result.returncode == code, result.stdout + result.stderr
    return result.stdout


def last_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def needs_compiler() -> None:
    """Skip where the emulated device cannot be built."""
    if shutil.which("c++") is None and shutil.which("g++") is None:
        pytest.skip("no C++ compiler: the emulated device cannot be built")


def installed(distribution: str, version: str, package: str) -> Path:
    """The installed package's folder (not imported here); skips where the `test` extra is not installed."""
    try:
        found = importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{distribution}=={version} is not installed (pip install -e '.[test]')")
    assert found == version, f"{distribution} {found} is installed, pyproject.toml's test extra pins {version}"
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, package
    return Path(next(iter(spec.submodule_search_locations)))


REPO = Path(__file__).resolve().parent.parent


def run_on_path(
    argv: list[str],
    cwd: Path,
    pythonpath: Path | None = None,
    *,
    threads: int | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """``argv`` with only ``pythonpath`` (a ported copy, or nothing: the installed original) on PYTHONPATH, and this
    checkout after it when ``argv`` is the CLI (whose ascend_port is then this one, even where the virtualenv's
    editable install is another checkout's); ``threads``: OMP_NUM_THREADS (tiny runs on CI's 2 shared cores);
    ``env``: variables to add."""
    env = {**environment(), **(env or {})}
    env.pop("PYTHONPATH", None)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    path = [] if pythonpath is None else [str(pythonpath)]
    if argv[: len(CLI)] == CLI:
        path.append(str(REPO))
    if path:
        env["PYTHONPATH"] = os.pathsep.join(path)
    return run(argv, cwd=cwd, env=env)


class PortedCopies:
    """``copies(project)`` -> the folder to put first on PYTHONPATH, holding the ported copy of an installed
    project's package (``project``: distribution, pinned version, import package), copied and ported once (a test
    module's fixture holds one). ``apply_options``: those of `ascend-port apply` besides --no-git and --no-cache
    (--no-cache: a module-scoped fixture runs before conftest's private XDG_CACHE_HOME is set, and must not write
    the user's result cache)."""

    def __init__(self, folders: pytest.TempPathFactory, *apply_options: str) -> None:
        self.folders = folders
        self.apply_options = apply_options
        self.ported: dict[str, Path] = {}

    def __call__(self, project: tuple[str, str, str]) -> Path:
        distribution, version, package = project
        if package not in self.ported:
            import time

            source = installed(distribution, version, package)
            root = self.folders.mktemp(f"ported-{package}")
            shutil.copytree(source, root / package, ignore=shutil.ignore_patterns("__pycache__"))
            start = time.perf_counter()
            apply = [*CLI, "apply", str(root / package), "--no-git", "--no-cache", *self.apply_options]
            check(run_on_path(apply, cwd=root))
            print(f"ported {distribution} {version} in {time.perf_counter() - start:.1f}s")
            self.ported[package] = root
        return self.ported[package]


def emulate(
    cwd: Path, ported: Path, command: list[str], devices: int = 1, env: Mapping[str, str] | None = None
) -> tuple[subprocess.CompletedProcess, dict]:
    """``command`` under `ascend-port emulate` with the ported copy first on PYTHONPATH, one thread (the start
    tests' runs are tiny: more threads only make them slower): (the process, its report)."""
    report = cwd / f"report-{len(list(cwd.glob('report-*.json')))}.json"
    argv = [*CLI, "emulate", "--devices", str(devices), "--report", str(report), "--", *command]
    start = time.perf_counter()
    result = run_on_path(argv, cwd, ported, threads=1, env=env)
    print(f"emulated {' '.join(command[1:])} in {time.perf_counter() - start:.1f}s")
    return result, json.loads(report.read_text("utf-8")) if report.exists() else {}


def driver(folder: Path, name: str, text: str) -> str:
    """A driver script written into ``folder``; its path."""
    path = folder / name
    path.write_text(textwrap.dedent(text), "utf-8")
    return str(path)


def calls(report: dict) -> dict[str, int]:
    """The torch_npu APIs an emulated run called, with their counts (its --report)."""
    return report.get("calls", {})


def outcomes(junit: Path) -> dict[str, str]:
    """test id (module::name[params]) -> passed, skipped or failed: the first line of its failure."""
    found = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
        found[name] = "passed"
        for child in case:
            if child.tag == "skipped":
                found[name] = "skipped"
            elif child.tag in ("failure", "error"):
                found[name] = "failed: " + (child.get("message") or "").splitlines()[0][:200]
    return found


def torchrun() -> str:
    """This interpreter's torchrun; skips where there is none."""
    found = shutil.which("torchrun", path=str(Path(sys.executable).parent)) or shutil.which("torchrun")
    if found is None:
        pytest.skip("no torchrun")
    return found


def launch(world: int, port: int, script: str, *args: str) -> list[str]:
    """The command that starts ``script`` in ``world`` processes: torchrun beyond one (on ``port``), else a plain
    interpreter (the drivers then default RANK, WORLD_SIZE and the master's address themselves)."""
    if world == 1:
        return [sys.executable, script, *args]
    return [torchrun(), "--nproc-per-node", str(world), "--master-port", str(port), script, *args]


# A module the process-group drivers import (ddp_driver writes it beside them): torchrun's ranks (one process without
# torchrun), and one step of a model in DDP checked against the mean of every rank's gradients computed without it.
DDP_STEP = """
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


# (rank, world size, local rank) from torchrun's environment, else one process.
def ranks(port):
    for key, value in {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": "0", "WORLD_SIZE": "1",
                       "LOCAL_RANK": "0"}.items():
        os.environ.setdefault(key, value)
    return tuple(int(os.environ[key]) for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK"))


# One optimizer step of `module` wrapped in DDP on this rank's batch (`loss_of(module, r)`: rank r's loss). Before
# the wrapper, the rank computes without it the mean of every rank's gradients (what DDP's all-reduce must give);
# after the step, the loss is all-reduced and the process group torn down. -> what the tests compare.
def ddp_step(module, params, loss_of, optimizer, rank, world, device_ids):
    expected = [torch.zeros_like(p) for p in params]
    for r in range(world):
        for total, grad in zip(expected, torch.autograd.grad(loss_of(module, r), params)):
            total += grad / world
    ddp = DistributedDataParallel(module, device_ids=device_ids)
    optimizer.zero_grad()
    loss = loss_of(ddp, rank)
    loss.backward()
    grads = [p.grad for p in params]
    result = {
        "rank": rank,
        "backend": dist.get_backend(),
        "grads": sum(g is not None for g in grads),
        "grad_devices": sorted({g.device.type for g in grads if g is not None}),
        "param_devices": sorted({p.device.type for p in module.parameters()}),
        "grad_error": max(float((g - e).abs().max()) for g, e in zip(grads, expected)),
        "grad_norm": float(torch.stack([g.double().norm() for g in grads]).norm()),
    }
    optimizer.step()
    mean = loss.detach().clone()
    dist.all_reduce(mean)
    result["mean_loss"] = float(mean) / world
    result["param_sum"] = float(sum(p.detach().double().abs().sum().cpu() for p in params))
    dist.barrier()  # (no rank tears the group down while another still uses it)
    dist.destroy_process_group()
    return result
"""


def ddp_driver(folder: Path, name: str, text: str) -> str:
    """A process-group driver written into ``folder``, with the module ``ddp_step`` (DDP_STEP) beside it; its
    path."""
    (folder / "ddp_step.py").write_text(DDP_STEP, "utf-8")
    return driver(folder, name, text)


def process_group_runs(
    folder: Path, ported: Path, world: int, master_port: int, script: str, original: str | None = None
) -> tuple[list[dict], list[dict], dict]:
    """A process-group driver (argv: OUTPUT, each rank writing OUTPUT-RANK.json) in ``world`` processes: ``script``
    on the ported copy under the emulator, and ``original`` (``script`` where None) on the original on CPU. ->
    (the emulated ranks' results, the original's, the emulate report)."""
    result, report = emulate(folder, ported, launch(world, master_port, script, "npu"), devices=world)
    check(result)
    start = time.perf_counter()
    check(run(launch(world, master_port, original or script, "cpu"), cwd=folder))
    print(
        f"original {Path(original or script).name} on CPU, {world} process(es), in {time.perf_counter() - start:.1f}s"
    )
    return rank_results(folder, "npu", world), rank_results(folder, "cpu", world), report


def rank_results(folder: Path, stem: str, world: int) -> list[dict]:
    """Each rank's result, written by the driver to ``folder/STEM-RANK.json`` (torchrun interleaves stdout)."""
    return [json.loads((folder / f"{stem}-{rank}.json").read_text("utf-8")) for rank in range(world)]


def own_tests(
    folders: pytest.TempPathFactory,
    sdist: Path,
    ported: Path,
    selection: list[str],
    *,
    extra: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    folder: str = "tests",
) -> tuple[dict[str, str], dict[str, str], dict]:
    """A project's own tests (``sdist``'s ``folder``, tests/ unless told, and its pyproject.toml, for the project's
    pytest settings; its sources come from the path), ported as a port of the repository ports them (`ascend-port
    apply` on the folder), run with pytest's arguments ``selection`` under the emulator on the ported copy
    ``ported``, and, unported, on the installed original on CPU. ``extra``: files (name -> text) written beside the
    folder on both sides; ``env``: the runs' extra environment. -> (emulated outcomes, original outcomes, emulate
    report)."""
    sides = {}
    for side in ("original", "ported"):
        sides[side] = folders.mktemp(f"{sdist.name}-tests-{side}")
        shutil.copytree(sdist / folder, sides[side] / folder, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(sdist / "pyproject.toml", sides[side])
        for name, text in (extra or {}).items():
            (sides[side] / name).write_text(text, "utf-8")
    ported_tests = sides["ported"] / folder
    check(run_on_path([*CLI, "apply", str(ported_tests), "--no-git", "--no-cache"], cwd=sides["ported"]))
    pytest_argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", "junit.xml"]
    result, report = emulate(sides["ported"], ported, [*pytest_argv, *selection], env=env)
    print(result.stdout[-3000:])
    start = time.perf_counter()
    reference = run_on_path([*pytest_argv, *selection], sides["original"], threads=1, env=env)
    print(f"original tests on CPU in {time.perf_counter() - start:.1f}s")
    print(reference.stdout[-1500:])
    check(reference)
    return outcomes(sides["ported"] / "junit.xml"), outcomes(sides["original"] / "junit.xml"), report
