"""Issue 31, item 1 (the proof of `ascend-port run`): three real projects of issue 29 ("The ported program starts")
and the bundled example, each run UNCHANGED under `ascend-port emulate -- ascend-port run --project COPY -- COMMAND`,
give what their permanent port gives (a copy ported with `ascend-port apply --no-git --no-cache` and run under the
emulator, as tests/test_emulate_start_*.py run it), and no file of the project changes.

What runs, each command the one the start test runs on the permanent port (third-party code is fetched or copied at
test time, never committed):
- litgpt 0.5.13 (its sdist: litgpt/, tests/, pyproject.toml): its own tests of the ported functions
  (tests/test_utils.py, test_emulate_start_llm.UNIT_TESTS: check_nvlink_connectivity, parse_devices,
  instantiate_torch_optimizer, chunked_cross_entropy; 19 tests), and the Fabric start path of its scripts
  (test_emulate_start_llm.PG_DRIVER) with two processes under torchrun: the ranks' losses and parameter checksums.
- stable-baselines3 2.9.2 (the installed package, its sdist's tests/ and pyproject.toml): its tests of the ported
  get_device and set_random_seed (test_emulate_start_rl_vision.SB3_UNIT_TESTS; 53 tests).
- gpytorch 1.15.2 (the installed package, its sdist's test/ and pyproject.toml): its tests of the ported priors,
  kernels and test utilities (test_emulate_start_gp.GP_UNIT_TESTS; 325 tests, the same six upstream failures).
- the bundled example (examples/cuda_trainer): `torchrun --nproc-per-node 2 train.py --config configs/tiny.yaml`.
  train.py seeds only its data, not its model: both sides run with a sitecustomize that seeds torch (outside the
  project), so that their logged losses can be compared.

Each test id's outcome (pytest's junit XML), or each rank's printed result, is the permanent port's; the run's report
(`run --report`) names the ported modules it served. Every file of the project is hashed (sha256) before and after:
none changes, and the only files added are the bytecode Python writes for the modules the port leaves as they are
(the runs clear PYTHONDONTWRITEBYTECODE so that it is written: a `.pyc` of a ported module would be the original's,
and the finder must never write one). The example's own checkpoint (checkpoints/, train.py's output) is left out.

Measured on 2 busy cores: 183 s for the module (litgpt's tests 21 s, its torchrun start 30 s, stable-baselines3's
tests 54 s, gpytorch's 33 s, the example 35 s, the ports with apply included); each run under `run` took 1-9 s more
than the same run of the permanent port (13-25 s each), for porting the whole project first.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

from emulation import CLI, PortedCopies, check, emulate, installed, needs_compiler, outcomes, run_on_path, torchrun
from test_emulate_start_gp import GP_UNIT_TESTS, GPYTORCH
from test_emulate_start_llm import PG_DRIVER, UNIT_TESTS, Litgpt
from test_emulate_start_rl_vision import SB3, SB3_UNIT_TESTS

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "cuda_trainer"
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
# Python writes bytecode beside the modules it imports from their files (the suite's environment may turn it off).
WRITE_BYTECODE = {"PYTHONDONTWRITEBYTECODE": ""}


@pytest.fixture(scope="module", autouse=True)
def compiler():
    needs_compiler()


def checksums(root: Path, leave_out: tuple[str, ...] = ()) -> dict[str, str]:
    """Every file under ``root`` (relative path -> sha256), but those under a folder named in ``leave_out``."""
    found = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and not set(relative.parts[:-1]) & set(leave_out):
            found[relative.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


class Unchanged:
    """A project's copy that `run` runs as it is: its files' checksums before, and the check after."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.before = checksums(root)

    def run(
        self, cwd: Path, command: list[str], folder: Path, devices: int = 1, pythonpath: Path | None = None
    ) -> tuple[subprocess.CompletedProcess, dict, dict]:
        """``command`` under `ascend-port emulate -- ascend-port run --project ROOT`, ROOT first on PYTHONPATH (as
        the permanent port's copy is), the reports written into ``folder`` (outside the project): (the process, the
        emulate report, the run report)."""
        emulated, ran = folder / "emulate.json", folder / "run.json"
        argv = [*CLI, "emulate", "--devices", str(devices), "--report", str(emulated), "--"]
        argv += ["ascend-port", "run", "--project", str(self.root), "--report", str(ran), "-q", "--", *command]
        start = time.perf_counter()
        result = run_on_path(argv, cwd, pythonpath or self.root, threads=1, env=WRITE_BYTECODE)
        print(f"ascend-port run {' '.join(command[1:])} in {time.perf_counter() - start:.1f}s")
        reports = [json.loads(path.read_text("utf-8")) if path.exists() else {} for path in (emulated, ran)]
        return result, reports[0], reports[1]

    def relative(self, path: str) -> str:
        return Path(self.root, path).resolve().relative_to(self.root).as_posix()

    def served(self, report: dict) -> set[str]:
        """The project's files `run` served ported (its --report), relative to the root."""
        return {self.relative(module["path"]) for module in report["imported"]}

    def ported(self, report: dict) -> set[str]:
        """Every Python module the port changes, served or not."""
        return self.served(report) | {self.relative(path) for path in report["not_imported"]}

    def assert_unchanged(self, report: dict, leave_out: tuple[str, ...] = ()) -> None:
        """No file changed or went; the files added are the bytecode of modules the port leaves unchanged (``report``:
        the run's). ``leave_out``: folders the program writes into (on both sides of the comparison)."""
        ported = self.ported(report)
        after = checksums(self.root, leave_out)
        before = {
            path: digest for path, digest in self.before.items() if not set(path.split("/")[:-1]) & set(leave_out)
        }
        assert {path: digest for path, digest in after.items() if path in before} == before
        added = sorted(set(after) - set(before))
        bytecode = [path for path in added if "/__pycache__/" in f"/{path}" and path.endswith(".pyc")]
        assert bytecode == added, added
        for path in bytecode:
            folder, _, name = f"/{path}".rpartition("/__pycache__/")
            source = f"{folder}/{name.split('.')[0]}.py".lstrip("/")
            assert source not in ported, f"bytecode of a ported module written: {path}"


def copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))


def sdist(project: tuple[str, ...], name: str) -> Path:
    try:
        return corpora.fetch(*project[:2], sdist=True) / name
    except subprocess.CalledProcessError as error:
        pytest.skip(f"{project[0]}=={project[1]}'s sdist cannot be downloaded: {error}")


def permanent_tests(
    folders: pytest.TempPathFactory, source: Path, ported: Path, selection: list[str], folder: str
) -> tuple[dict[str, str], int]:
    """The project's tests (``source``'s ``folder`` and pyproject.toml) ported with `apply --no-git --no-cache` and
    run under the emulator on the ported package ``ported``, as test_emulate_start_*'s own tests run them: (outcome
    per test id, exit code)."""
    side = folders.mktemp(f"{source.name}-tests-permanent")
    copy_tree(source / folder, side / folder)
    shutil.copy(source / "pyproject.toml", side)
    check(run_on_path([*CLI, "apply", str(side / folder), "--no-git", "--no-cache"], cwd=side))
    result, _ = emulate(side, ported, [*PYTEST, "--junitxml", "junit.xml", *selection])
    print(result.stdout[-1500:])
    return outcomes(side / "junit.xml"), result.returncode


def run_tests(
    folders: pytest.TempPathFactory, project: Unchanged, selection: list[str]
) -> tuple[dict[str, str], int, dict]:
    """The same tests on the unchanged copy under `ascend-port run`: (outcome per test id, exit code, run report)."""
    reports = folders.mktemp("run-reports")
    junit = reports / "junit.xml"
    result, _, ran = project.run(project.root, [*PYTEST, "--junitxml", str(junit), *selection], reports)
    print(result.stdout[-1500:] + result.stderr[-1500:])
    return outcomes(junit), result.returncode, ran


def assert_same_outcomes(permanent: tuple[dict[str, str], int], on_the_fly: tuple[dict[str, str], int, dict]) -> None:
    (expected, code), (found, found_code, _) = permanent, on_the_fly
    assert expected, "the permanent port ran no test"
    assert found == expected
    assert found_code == code


# --- litgpt: its own tests, and Fabric's start path in two processes --------------------------------------------------


@pytest.fixture(scope="module")
def litgpt(tmp_path_factory) -> Litgpt:
    """The permanent port (test_emulate_start_llm.Litgpt: package and tests ported with apply)."""
    return Litgpt(tmp_path_factory)


@pytest.fixture(scope="module")
def litgpt_unchanged(litgpt, tmp_path_factory) -> Unchanged:
    """The sdist's litgpt/, tests/ and pyproject.toml, as they are."""
    root = tmp_path_factory.mktemp("unchanged-litgpt")
    for name in ("litgpt", "tests"):
        copy_tree(litgpt.source / name, root / name)
    shutil.copy(litgpt.source / "pyproject.toml", root)
    return Unchanged(root)


@pytest.mark.slow
def test_litgpt_own_tests_under_run_as_under_the_permanent_port(litgpt, litgpt_unchanged, tmp_path_factory):
    result, _ = emulate(litgpt.ported_tests, litgpt.ported, [*PYTEST, "--junitxml", "junit.xml", *UNIT_TESTS])
    permanent = outcomes(litgpt.ported_tests / "junit.xml"), result.returncode
    on_the_fly = run_tests(tmp_path_factory, litgpt_unchanged, UNIT_TESTS)
    assert len(permanent[0]) >= 15 and set(permanent[0].values()) == {"passed"}, permanent
    assert_same_outcomes(permanent, on_the_fly)
    served = litgpt_unchanged.served(on_the_fly[2])
    # the code under test and the tests themselves (their mock targets, torch.npu) ran from their ports
    assert {"litgpt/utils.py", "tests/test_utils.py"} <= served, served
    litgpt_unchanged.assert_unchanged(on_the_fly[2])


def rank_results(folder: Path, world: int) -> list[dict]:
    return [json.loads((folder / f"npu-{rank}.json").read_text("utf-8")) for rank in range(world)]


@pytest.mark.slow
def test_litgpt_fabric_in_two_processes_under_run_as_under_the_permanent_port(
    litgpt, litgpt_unchanged, tmp_path_factory
):
    """PG_DRIVER (a driver outside the project, writing each rank's result beside it) under torchrun, two ranks."""
    sides = {}
    for side, port in (("permanent", 29591), ("run", 29592)):
        folder = tmp_path_factory.mktemp(f"litgpt-pg-{side}")
        (folder / "litgpt_pg.py").write_text(PG_DRIVER, "utf-8")
        command = [torchrun(), "--nproc_per_node", "2", "--master_port", str(port), "litgpt_pg.py", "npu"]
        if side == "permanent":
            result, report = emulate(folder, litgpt.ported, command, devices=2)
            ran: dict = {}
        else:
            result, report, ran = litgpt_unchanged.run(folder, command, folder, devices=2)
        check(result)
        sides[side] = rank_results(folder, 2), report, ran
    (permanent, permanent_report, _), (on_the_fly, report, ran) = sides["permanent"], sides["run"]
    for rank, expected in zip(on_the_fly, permanent, strict=True):
        assert Path(expected.pop("package")).is_relative_to(litgpt.ported)
        assert Path(rank.pop("package")).is_relative_to(litgpt_unchanged.root)  # the files as they are...
        assert rank == expected  # ...ported: parse_devices counts the 2 NPUs, the same losses and parameters
    assert on_the_fly[0]["devices"] == 2 and on_the_fly[0]["backend"] == "gloo", on_the_fly[0]
    # both ranks ran the ported get_default_supported_precision (torch.npu.is_bf16_supported)
    calls = report.get("calls", {})
    assert calls.get("torch.npu.is_bf16_supported") == permanent_report["calls"]["torch.npu.is_bf16_supported"] == 2
    served = litgpt_unchanged.served(ran)
    assert "litgpt/utils.py" in served, served
    litgpt_unchanged.assert_unchanged(ran)


# --- stable-baselines3 and gpytorch: their own tests -------------------------------------------------------------------


def installed_with_tests(
    folders: pytest.TempPathFactory, project: tuple[str, str, str], source: Path, tests: str
) -> Unchanged:
    """The installed package, its sdist's tests and pyproject.toml, as they are."""
    root = folders.mktemp(f"unchanged-{project[2]}")
    copy_tree(installed(*project), root / project[2])
    copy_tree(source / tests, root / tests)
    shutil.copy(source / "pyproject.toml", root)
    return Unchanged(root)


@pytest.mark.slow
def test_stable_baselines3_own_tests_under_run_as_under_the_permanent_port(tmp_path_factory):
    source = sdist(SB3, f"stable_baselines3-{SB3[1]}")
    unchanged = installed_with_tests(tmp_path_factory, SB3, source, "tests")
    permanent = permanent_tests(tmp_path_factory, source, PortedCopies(tmp_path_factory)(SB3), SB3_UNIT_TESTS, "tests")
    on_the_fly = run_tests(tmp_path_factory, unchanged, SB3_UNIT_TESTS)
    assert len(permanent[0]) >= 50 and any("[npu-" in test for test in permanent[0]), permanent
    assert_same_outcomes(permanent, on_the_fly)
    served = unchanged.served(on_the_fly[2])
    assert "stable_baselines3/common/utils.py" in served, served  # get_device, set_random_seed
    unchanged.assert_unchanged(on_the_fly[2])


@pytest.mark.slow
def test_gpytorch_own_tests_under_run_as_under_the_permanent_port(tmp_path_factory):
    source = sdist(GPYTORCH, f"gpytorch-{GPYTORCH[1]}")
    unchanged = installed_with_tests(tmp_path_factory, GPYTORCH, source, "test")
    ported = PortedCopies(tmp_path_factory)(GPYTORCH)  # (the copy ported with apply, as the start test ports it)
    permanent = permanent_tests(tmp_path_factory, source, ported, GP_UNIT_TESTS, "test")
    on_the_fly = run_tests(tmp_path_factory, unchanged, GP_UNIT_TESTS)
    assert len(permanent[0]) >= 300 and permanent[1] == 1  # (six upstream failures: test_emulate_start_gp says why)
    assert_same_outcomes(permanent, on_the_fly)
    served = unchanged.served(on_the_fly[2])
    assert {"gpytorch/priors/torch_priors.py", "gpytorch/test/base_test_case.py"} <= served, served
    unchanged.assert_unchanged(on_the_fly[2])


# --- the bundled example, two processes ---------------------------------------------------------------------------


def example_command(master_port: int) -> list[str]:
    """The example's own smoke test in two processes (on a port of its own: torchrun's default may be held by
    another suite's run at the same time)."""
    config = ["--config", "configs/tiny.yaml"]
    return [torchrun(), "--nproc-per-node", "2", "--master-port", str(master_port), "train.py", *config]


LOSS = re.compile(r"step (\d+) \| loss ([0-9.]+)")


@pytest.mark.slow
def test_bundled_example_in_two_processes_under_run_as_under_the_permanent_port(tmp_path_factory):
    """tests/test_run_onthefly.py runs the unchanged example under torchrun; here its losses are the permanent
    port's under torchrun too."""
    pytest.importorskip("yaml")
    seeded = tmp_path_factory.mktemp("seeded")
    # train.py leaves its model's initialisation unseeded; the same seed on both sides makes the losses comparable.
    (seeded / "sitecustomize.py").write_text("import torch\n\ntorch.manual_seed(0)\n", "utf-8")
    ported = tmp_path_factory.mktemp("example-permanent") / "cuda_trainer"
    copy_tree(EXAMPLE, ported)
    check(run_on_path([*CLI, "apply", str(ported), "--no-git", "--no-cache"], cwd=ported.parent))
    permanent, _ = emulate(ported, seeded, example_command(29593), devices=2)
    check(permanent)
    root = tmp_path_factory.mktemp("example-unchanged") / "cuda_trainer"
    copy_tree(EXAMPLE, root)
    unchanged = Unchanged(root)
    on_the_fly, report, ran = unchanged.run(root, example_command(29594), root.parent, devices=2, pythonpath=seeded)
    check(on_the_fly)
    losses = LOSS.findall(permanent.stderr)
    assert len(losses) == 3 and LOSS.findall(on_the_fly.stderr) == losses, (losses, on_the_fly.stderr[-2000:])
    assert report["calls"].get("torch_npu.npu_fusion_attention"), report["calls"]  # model.py's fused path, ported
    served = unchanged.served(ran)
    assert {"train.py", "model.py"} <= served, served
    unchanged.assert_unchanged(ran, leave_out=("checkpoints",))  # (train.py's own checkpoint of the run)
