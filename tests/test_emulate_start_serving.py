"""Issue 29 (part): a real model-serving project from PyPI, LitServe 0.2.19, ported by the CLI and started under
`ascend-port emulate`: the accelerator and devices it picks by itself, an HTTP server answering requests with a torch
model on the device it gives its worker, and its own unit tests of the module the port changed.

As in tests/test_emulate_start_rl_vision.py, litserve is pinned in pyproject.toml's `test` extra and installed in
site-packages (it installs beside the rest: fastapi, uvicorn, pyzmq, pydantic, none of them already there); a test
copies the installed package into a temporary folder (third-party code is never committed here), ports the copy with
`ascend-port apply --no-git --no-cache`, runs a driver on the ported copy under the emulator on the `npu` device and
on the original on plain CPU, and compares. Its wheel ships no tests: the test fetches its sdist (benchmarks/
corpora.py, `pip download`) for tests/unit/test_connector.py, ported on its own.

The port changes two modules of the package. connector.py picks the accelerator: `_Connector("auto")` asks
`nvidia-smi -L` for CUDA GPUs (check_cuda_with_nvidia_smi), then MPS, else the CPU; server.py's LitServer turns the
choice into one device string per inference worker ("cpu", or "cuda:0", ...), which each worker process (spawned)
hands to `LitAPI.setup(device)`. The port adds "npu" to the three allow-lists of connector.py (:25, :41, and :65,
`_sanitize_accelerator`'s, whose `None` no longer hides it), adds an NPU branch beside each CUDA branch that calls
the nvidia-smi count (:79 the device count, :85 the GPU backend choice), asking `_npu_device_count()`, which it
writes after check_cuda_with_nvidia_smi (torch.npu.device_count(), 0 without torch_npu), and adds "npu" to
server.py:862 `elif accelerator in ["cuda", "mps"]` (whose body builds f"{accelerator}:{i}"). check_cuda_with_nvidia_smi
itself runs nvidia-smi and stays CUDA's (CUDA_VISIBLE_DEVICES filters the NVIDIA GPUs it lists).

What starts:
- `_Connector` and `LitServer`'s devices under the emulator: accelerator="auto", None, "gpu", "npu" (and "NPU")
  -> "npu" with the NPU count, one worker on "npu:0"; "cpu" -> the CPU, as the original on CPU.
- check_cuda_with_nvidia_smi's count of a mocked `nvidia-smi -L` (two GPUs, CUDA_VISIBLE_DEVICES=1) is 1, as the
  original's.
- A LitServer on 127.0.0.1 (a free port, one API server, the shutdown API) serving a tiny nn.Linear: it starts under
  the emulator, answers two requests with the original's outputs from the npu LitServe gave its worker ("npu:0"), and
  shuts down. Its inference worker is a spawned process, and the emulated device reaches it (the emulator's stub is
  on the PYTHONPATH the child inherits, and torch's backend autoload imports it). (The emulator's report does not
  count that worker: LitServe ends its workers with SIGTERM, and the report is written at exit.)
- With two emulated NPUs (`emulate --devices 2`), accelerator="auto" counts two and LitServer starts two workers on
  npu:0 and npu:1, which serve as the original's one CPU worker (the serving analogue of a two-process group).
- Its own tests/unit/test_connector.py: the port keeps its tests whole (they test nvidia-smi's count: NPU517), so
  their CUDA guards skip the CUDA cases on an NPU host and the mocked nvidia-smi case runs there: every outcome is
  the original's on CPU.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("torch")

from emulation import (
    CLI,
    REPO,
    PortedCopies,
    calls,
    check,
    driver,
    emulate,
    environment,
    installed,
    last_json,
    needs_compiler,
    outcomes,
    run_on_path,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

# (distribution, pinned version, import package): the pin of pyproject.toml's `test` extra.
LITSERVE = ("litserve", "0.2.19", "litserve")


def run(argv: list[str], cwd: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    return run_on_path(argv, cwd, pythonpath, threads=1)  # (the runs are tiny: more threads only make them slower)


@pytest.fixture(scope="module", autouse=True)
def compiler():
    needs_compiler()


class Litserve:
    """The installed package (the original) and a ported copy (``ported``: the folder to put first on PYTHONPATH),
    and the sdist's tests/unit/test_connector.py, as it is (``tests``) and ported (``ported_tests``): each folder
    holds tests/test_connector.py."""

    def __init__(self, folders: pytest.TempPathFactory) -> None:
        self.source = installed(*LITSERVE)
        self.ported = PortedCopies(folders)(LITSERVE)
        try:
            sdist = corpora.fetch(*LITSERVE[:2], sdist=True) / f"litserve-{LITSERVE[1]}"
        except subprocess.CalledProcessError as error:
            pytest.skip(f"litserve=={LITSERVE[1]}'s sdist cannot be downloaded: {error}")
        self.tests = folders.mktemp("litserve-tests")
        self.ported_tests = folders.mktemp("ported-litserve-tests")
        for folder in (self.tests, self.ported_tests):
            (folder / "tests").mkdir()
            shutil.copy(sdist / "tests" / "unit" / "test_connector.py", folder / "tests")
        check(run([*CLI, "apply", str(self.ported_tests / "tests"), "--no-git", "--no-cache"], cwd=self.ported_tests))

    def connector(self) -> str:
        return (self.ported / "litserve" / "connector.py").read_text("utf-8")


@pytest.fixture(scope="module")
def litserve(tmp_path_factory):
    return Litserve(tmp_path_factory)


def test_the_port_changes_connector_py_as_described(litserve):
    text = litserve.connector()
    assert 'if accelerator in ("cpu", "cuda", "npu", "mps"):' in text
    assert 'if self._accelerator in ("cuda", "npu", "mps"):' in text
    assert 'if accelerator not in ["auto", "cpu", "mps", "cuda", "npu", "gpu", None]:' in text
    assert "TODO(ascend-port)" not in text
    # the NPU branches beside the CUDA ones ask the NPU count the port writes after the nvidia-smi count
    assert 'elif self._accelerator == "npu":\n            return _npu_device_count()\n' in text
    assert 'elif _npu_device_count() > 0:\n            return "npu"\n' in text
    assert text.count("def _npu_device_count() -> int:") == 1
    assert text.index("def check_cuda_with_nvidia_smi") < text.index("def _npu_device_count")
    # check_cuda_with_nvidia_smi runs nvidia-smi: it stays CUDA's
    assert 'os.environ.get("CUDA_VISIBLE_DEVICES")' in text and "ASCEND_RT_VISIBLE_DEVICES" not in text
    server = (litserve.ported / "litserve" / "server.py").read_text("utf-8")
    original = (litserve.source / "server.py").read_text("utf-8")
    assert server == original.replace(
        'elif accelerator in ["cuda", "mps"]:', 'elif accelerator in ["cuda", "npu", "mps"]:'
    )
    assert server != original


# Prints what the project chooses by itself: _Connector's accelerator and devices for each accelerator argument (or
# the error), LitServer's devices and its inference workers' devices, LitServer with accelerator="npu" (and with
# _sanitize_accelerator let through, to see the next step), and check_cuda_with_nvidia_smi's count of a mocked
# `nvidia-smi -L` listing two GPUs under CUDA_VISIBLE_DEVICES=1 (as its own test mocks it).
CONNECTOR_DRIVER = """
import json, os
from unittest import mock

import torch

import litserve
from litserve.connector import _Connector, check_cuda_with_nvidia_smi


class API(litserve.LitAPI):
    def setup(self, device):
        pass

    def predict(self, x):
        return x


def outcome(function):
    try:
        return function()
    except Exception as error:
        return f"{type(error).__name__}: {error}"


def connector(accelerator):
    found = _Connector(accelerator=accelerator)
    return [found.accelerator, found.devices]


def server(accelerator, **options):
    found = litserve.LitServer(API(), accelerator=accelerator, **options)
    return [found.devices, found._inference_workers_config_for_api("/predict")]


npu = getattr(torch, "npu", None)
out = {
    "package": litserve.__file__,
    "npu_count": npu.device_count() if npu is not None and npu.is_available() else 0,
    "connector": {str(a): outcome(lambda: connector(a)) for a in ("auto", None, "cpu", "gpu", "npu", "NPU")},
    "server_auto": outcome(lambda: server("auto")),
    "server_npu": outcome(lambda: server("npu", devices=1)),
}
with mock.patch.object(_Connector, "_sanitize_accelerator", staticmethod(lambda accelerator: accelerator)):
    out["server_npu_past_sanitize"] = outcome(lambda: server("npu", devices=1))
listing = b"GPU 0: NVIDIA H100 (UUID: GPU-0)\\nGPU 1: NVIDIA H100 (UUID: GPU-1)"
os.environ.pop("ASCEND_RT_VISIBLE_DEVICES", None)
with mock.patch("litserve.connector.subprocess.check_output", return_value=listing):
    with mock.patch.dict(os.environ, {"CUDA_VISIBLE_DEVICES": "1"}):
        check_cuda_with_nvidia_smi.cache_clear()
        out["nvidia_smi_count_visible_1"] = check_cuda_with_nvidia_smi()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def litserve_choice(litserve, tmp_path_factory):
    """-> (emulated output, original output, emulate report) of CONNECTOR_DRIVER."""
    folder = tmp_path_factory.mktemp("litserve-choice")
    script = driver(folder, "choice.py", CONNECTOR_DRIVER)
    result, report = emulate(folder, litserve.ported, [sys.executable, script])
    emulated = last_json(check(result))
    reference = last_json(check(run([sys.executable, script], cwd=folder)))
    assert Path(emulated["package"]).is_relative_to(litserve.ported), emulated["package"]
    assert Path(reference["package"]).is_relative_to(litserve.source), reference["package"]
    return emulated, reference, report


SANITIZE_ERROR = "ValueError: accelerator must be one of 'auto', 'cpu', 'mps', 'cuda', or 'gpu'. Found: npu"
ON_THE_NPU = ["npu", 1]
NPU_WORKER = [[["npu:0"]], [["npu:0"]]]  # (LitServer's devices, its worker's: one list of device strings each)


@pytest.mark.slow
def test_litserve_chooses_the_npu_under_the_emulator(litserve_choice):
    emulated, reference, report = litserve_choice
    assert emulated["npu_count"] == 1 and reference["npu_count"] == 0
    assert reference["connector"]["auto"] == reference["connector"]["None"] == ["cpu", 1], reference
    assert reference["server_auto"] == [["cpu"], ["cpu"]], reference
    assert reference["connector"]["gpu"].startswith("ValueError: accelerator must be one of (cuda, mps, cpu)")
    assert reference["connector"]["npu"] == reference["server_npu"] == SANITIZE_ERROR, reference
    # auto and None (connector.py:85's NPU branch), "gpu" (the same), "npu" given (connector.py:65's list, :79's
    # NPU count), the CPU as the original's
    for accelerator in ("auto", "None", "gpu", "npu", "NPU"):
        assert emulated["connector"][accelerator] == ON_THE_NPU, (accelerator, emulated["connector"])
    assert emulated["connector"]["cpu"] == reference["connector"]["cpu"] == ["cpu", 1]
    # LitServer gives its worker the npu (server.py:862)
    for key in ("server_auto", "server_npu", "server_npu_past_sanitize"):
        assert emulated[key] == NPU_WORKER, (key, emulated[key])
    assert calls(report).get("torch.npu.is_available", 0) > 0, calls(report)


@pytest.mark.slow
def test_litserve_nvidia_smi_count_keeps_cuda_visible_devices(litserve_choice):
    """connector.py:110: check_cuda_with_nvidia_smi counts the NVIDIA GPUs `nvidia-smi -L` lists, filtered by
    CUDA_VISIBLE_DEVICES, which the port keeps (the function runs nvidia-smi): two GPUs listed, one visible."""
    emulated, reference, _ = litserve_choice
    assert reference["nvidia_smi_count_visible_1"] == emulated["nvidia_smi_count_visible_1"] == 1, emulated


# argv: PORT ACCELERATOR CHOICE. A LitServer on 127.0.0.1:PORT (one API server, the shutdown API) serving a seeded
# nn.Linear(4, 3), which setup(device) moves to the device LitServe gives its worker (CHOICE "given") or to the npu
# where torch.npu is available (CHOICE "own", the LitAPI's own choice). Each response names the device LitServe gave,
# where the parameters and the output were, and whether torch.npu is available in the worker process; each worker's
# setup writes the device it was given and where its model went to setup-<pid>.json in the current folder.
SERVER_DRIVER = """
import json
import os
import sys

import torch

import litserve as ls

PORT, ACCELERATOR, CHOICE = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def npu_available():
    return getattr(torch, "npu", None) is not None and torch.npu.is_available()


class LinearAPI(ls.LitAPI):
    def setup(self, device):
        self.given = str(device)
        if CHOICE == "own":
            device = "npu" if npu_available() else "cpu"
        torch.manual_seed(0)
        self.model = torch.nn.Linear(4, 3).to(device).eval()
        parameter = next(self.model.parameters())
        with open(f"setup-{os.getpid()}.json", "w") as record:
            json.dump({"given": self.given, "param": str(parameter.device)}, record)

    def decode_request(self, request):
        return torch.tensor(request["input"], dtype=torch.float32)

    def predict(self, x):
        parameter = next(self.model.parameters())
        with torch.no_grad():
            y = self.model(x.to(parameter.device))
        return {
            "output": y.cpu().tolist(),
            "given": self.given,
            "param_device": parameter.device.type,
            "output_device": y.device.type,
            "npu_in_worker": npu_available(),
        }

    def encode_response(self, output):
        return output


if __name__ == "__main__":
    server = ls.LitServer(LinearAPI(), accelerator=ACCELERATOR, timeout=30, enable_shutdown_api=True)
    server.run(host="127.0.0.1", port=PORT, num_api_servers=1, generate_client_file=False)
"""

INPUTS = ([1.0, 2.0, 3.0, 4.0], [[0.5, -1.0, 0.0, 2.0], [3.0, 1.0, -2.0, 0.25]])
SHUTDOWN_KEY = "ascend-port-test"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def post(port: int, path: str, body: bytes, headers: dict[str, str]) -> bytes:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read()


def serve(folder: Path, argv: list[str], pythonpath: Path | None, port: int) -> dict:
    """Start ``argv`` (the server, whose last arguments are PORT ACCELERATOR CHOICE) in its own session, wait for
    /health (two minutes at most), post INPUTS, shut it down by its API, and always stop it: {"responses": [...] or
    None, "error": ..., "exit_code": ..., "log": its output's end}."""
    env = environment()
    env.pop("PYTHONPATH", None)
    paths = ([] if pythonpath is None else [str(pythonpath)]) + ([str(REPO)] if argv[: len(CLI)] == CLI else [])
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(OMP_NUM_THREADS="1", LIT_SHUTDOWN_API_KEY=SHUTDOWN_KEY)
    log = folder / f"server-{port}.log"
    found: dict = {"responses": None, "error": None, "exit_code": None}
    start = time.perf_counter()
    with log.open("w") as output:
        process = subprocess.Popen(
            argv, cwd=folder, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                        if response.read() == b"ok":
                            break
                except OSError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    raise TimeoutError(f"no /health in {time.perf_counter() - start:.0f}s")
                time.sleep(0.5)
            json_header = {"Content-Type": "application/json"}
            found["responses"] = [
                json.loads(post(port, "/predict", json.dumps({"input": x}).encode(), json_header)) for x in INPUTS
            ]
            post(port, "/shutdown", b"", {"Authorization": f"Bearer {SHUTDOWN_KEY}"})
            found["exit_code"] = process.wait(timeout=60)
        except (OSError, TimeoutError, subprocess.TimeoutExpired, ValueError) as error:
            found["error"] = f"{type(error).__name__}: {error}"
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
    found["log"] = log.read_text("utf-8", errors="replace")[-3000:]
    found["setups"] = sorted(
        (json.loads(path.read_text("utf-8")) for path in folder.glob("setup-*.json")), key=lambda s: s["given"]
    )
    found["seconds"] = time.perf_counter() - start
    print(f"served {' '.join(argv[-3:])} in {time.perf_counter() - start:.1f}s: {found['error'] or 'ok'}")
    return found


def serve_emulated(folder: Path, script: str, ported: Path, choice: str, devices: int = 1) -> dict:
    """serve() of the ported copy under the emulator with ``devices`` NPUs, accelerator="auto", in a folder of its
    own (for its workers' setup records); "report": the emulate report."""
    cwd = folder / f"emulated-{choice}-{devices}"
    cwd.mkdir()
    port = free_port()
    report = cwd / "report.json"
    argv = [*CLI, "emulate", "--devices", str(devices), "--report", str(report), "--"]
    found = serve(cwd, [*argv, sys.executable, script, str(port), "auto", choice], ported, port)
    found["report"] = json.loads(report.read_text("utf-8")) if report.exists() else {}
    return found


@pytest.fixture(scope="module")
def litserve_served(litserve, tmp_path_factory):
    """-> {"original": ..., "given": ..., "own": ...}: serve()'s results, of the original on CPU (CHOICE "given")
    and of the ported copy under the emulator with each CHOICE, accelerator="auto"."""
    folder = tmp_path_factory.mktemp("litserve-served")
    script = driver(folder, "serve.py", SERVER_DRIVER)
    (folder / "original").mkdir()
    port = free_port()
    served = {"original": serve(folder / "original", [sys.executable, script, str(port), "auto", "given"], None, port)}
    for choice in ("given", "own"):
        served[choice] = serve_emulated(folder, script, litserve.ported, choice)
    return served


def same_outputs(found: dict, reference: dict) -> bool:
    def flat(value):
        return [x for item in value for x in flat(item)] if isinstance(value, list) else [value]

    pairs = [
        (a, b)
        for mine, theirs in zip(found["responses"], reference["responses"], strict=True)
        for a, b in zip(flat(mine["output"]), flat(theirs["output"]), strict=True)
    ]
    return bool(pairs) and all(math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6) for a, b in pairs)


@pytest.mark.slow
def test_litserve_serves_under_the_emulator_like_the_original(litserve_served):
    reference = litserve_served["original"]
    assert reference["error"] is None and reference["exit_code"] == 0, reference
    assert [r["given"] for r in reference["responses"]] == ["cpu", "cpu"], reference["responses"]
    assert not any(r["npu_in_worker"] for r in reference["responses"])
    assert reference["setups"] == [{"given": "cpu", "param": "cpu"}], reference["setups"]
    for choice in ("given", "own"):
        found = litserve_served[choice]
        assert found["error"] is None and found["exit_code"] == 0, found
        # the worker is a spawned process: the emulated device reaches it; LitServe gives it the npu it chose
        # (accelerator="auto": connector.py:85's NPU branch), and the LitAPI's own choice is the npu too
        assert all(r["npu_in_worker"] for r in found["responses"]), found["responses"]
        assert all(r["given"] == "npu:0" for r in found["responses"]), found["responses"]
        assert {r["param_device"] for r in found["responses"]} == {r["output_device"] for r in found["responses"]}
        assert {r["param_device"] for r in found["responses"]} == {"npu"}, found["responses"]
        assert same_outputs(found, reference), (found["responses"], reference["responses"])
        # the report holds the server's main process only: LitServe ends its inference worker with SIGTERM (at
        # shutdown), before the emulator's report of that process is written at its exit
        assert found["report"].get("exit_code") == 0, found["report"]
    assert litserve_served["given"]["setups"] == [{"given": "npu:0", "param": "npu:0"}]


@pytest.mark.slow
def test_litserve_serves_with_two_workers_on_two_npus(litserve, litserve_served, tmp_path_factory):
    """Two emulated NPUs: accelerator="auto" counts them (_npu_device_count()), and LitServer starts one worker per
    device, npu:0 and npu:1, each with its model there, answering as the original's one CPU worker (the serving
    analogue of a process group with two processes)."""
    folder = tmp_path_factory.mktemp("litserve-two")
    script = driver(folder, "serve.py", SERVER_DRIVER)
    found = serve_emulated(folder, script, litserve.ported, "given", devices=2)
    assert found["error"] is None and found["exit_code"] == 0, found
    assert found["setups"] == [{"given": f"npu:{i}", "param": f"npu:{i}"} for i in (0, 1)], found["setups"]
    assert {r["given"] for r in found["responses"]} <= {"npu:0", "npu:1"}, found["responses"]
    assert {r["param_device"] for r in found["responses"]} == {"npu"}, found["responses"]
    assert same_outputs(found, litserve_served["original"]), found["responses"]
    assert found["report"].get("devices") == 2, found["report"]
    assert found["seconds"] < 120, found["seconds"]


@pytest.fixture(scope="module")
def litserve_unit_tests(litserve):
    """-> (emulated outcomes, original outcomes, emulate report): the ported test_connector.py on the ported copy
    under the emulator, the original on the original on CPU."""
    pytest_argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", "junit.xml"]
    command = [*pytest_argv, "tests/test_connector.py"]
    result, report = emulate(litserve.ported_tests, litserve.ported, command)
    print(result.stdout[-3000:])
    check(run(command, cwd=litserve.tests))
    emulated, reference = (outcomes(folder / "junit.xml") for folder in (litserve.ported_tests, litserve.tests))
    return emulated, reference, report


@pytest.mark.slow
def test_litserve_own_connector_tests_pass_like_the_original(litserve, litserve_unit_tests):
    """The port keeps tests/unit/test_connector.py as it is: each test refers to check_cuda_with_nvidia_smi, whose
    subject is nvidia-smi (NPU517), so its CUDA guards stay: on an NPU host the CUDA cases are skipped and the mocked
    nvidia-smi case runs, as on the original's CPU host."""
    assert (litserve.ported_tests / "tests" / "test_connector.py").read_bytes() == (
        litserve.tests / "tests" / "test_connector.py"
    ).read_bytes()
    emulated, reference, report = litserve_unit_tests
    passed = {
        "test_connector::test_connector[cpu-cpu-1]",
        "test_connector::test__sanitize_accelerator",
        "test_connector::test_check_cuda_with_nvidia_smi_mock_gpu",
    }
    assert {test for test, outcome in reference.items() if outcome == "passed"} == passed, reference
    assert emulated == reference, {test: (emulated.get(test), reference[test]) for test in reference}
    assert report.get("exit_code") == 0 and report.get("devices") == 1, report
