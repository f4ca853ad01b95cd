"""Verify a ported project on a real Ascend host: `python kit/run_kit.py --project .`

Written by `ascend-port verify --kit DIR`. Needs only Python and the project's own torch / torch_npu: ascend-port is
not installed here (stdlib only; torch is imported in subprocesses, so a broken install is reported, not fatal).
Steps, each reported even when an earlier one failed: the environment check, the kit's commands run with the probe
on PYTHONPATH, the recorded losses compared with the CPU reference, step time and memory, one markdown report
(reports/kit-report-<timestamp>.md, pasteable into an issue) and its JSON.

Exit code: 0 when every command exited 0 and every comparison held; 1 otherwise (also when the environment check
failed, except under --emulate, where this host's environment is not what is verified); 2 for a usage error; 130 on
Ctrl-C (the report is still written).
"""

from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict  # noqa: UP035 (Dict: the kit runs on Python 3.8, which the wheels of torch-npu 2.1 support)

KIT = Path(__file__).resolve().parent
ASCEND_ROOT = "/usr/local/Ascend"
EMULATED_BANNER = "EMULATED: not a real NPU run"
CUDA_BANNER = "CUDA: the NPU replaced by CUDA (this run shows the comparison on a CUDA GPU, not on an NPU)"
# Defaults when the reference carries no tolerances (mirrors ascend_port/verify/kit.py TOLERANCES["fp32"]).
DEFAULT_RTOL, DEFAULT_ATOL = 1e-3, 1e-4
STDERR_LINES = 20
SIDE_BY_SIDE = 10
NO_DEVICE = "trained without device memory: it ran on the CPU"
Check = Dict[str, str]  # noqa: UP006 (evaluated at run time: Python 3.8)

# A failure's text -> the fix to try (the messages are those torch_npu and the loader print; see the kit's README).
HINTS = (
    (
        "Two accelerators cannot be used",
        "torch_npu refuses a CUDA build of torch: install the CPU build of the torch version torch-npu requires "
        "(pip install torch==<its pin> --index-url https://download.pytorch.org/whl/cpu)",
    ),
    (
        "cannot open shared object file",
        "CANN's libraries are not on LD_LIBRARY_PATH: "
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh (or the set_env.sh of your CANN install)",
    ),
    ("undefined symbol", "torch and torch-npu do not match (ABI): install the torch version this torch-npu requires"),
    (
        "Failed to load the backend extension",
        "torch autoloads torch_npu and its import failed: fix CANN "
        "(source set_env.sh) or set TORCH_DEVICE_BACKEND_AUTOLOAD=0 for programs that do not use the NPU",
    ),
    ("No module named 'torch_npu'", "install torch-npu (pip install torch-npu==VERSION)"),
    ("No module named 'torch'", "install torch (the CPU build of the version torch-npu requires)"),
    ("out of memory", "the device ran out of memory: lower the batch size of the smoke command"),
)


class UsageError(Exception):
    """A kit or a command line that cannot run (exit code 2): the message names the file or option and why."""


def hint(text: str) -> str:
    for needle, fix in HINTS:
        if needle.lower() in text.lower():
            return fix
    return ""


def check(name: str, status: str, detail: str, fix: str = "") -> Check:
    return {"name": name, "status": status, "detail": detail, "fix": fix}


def read_info(path: str, keys: tuple = ("Version", "version", "package_version", "Innerversion")) -> str | None:
    """The version line of a `version.info` / `ascend_toolkit_install.info` file (key=value lines), else None."""
    try:
        lines = Path(path).read_text("utf-8", "replace").splitlines()
    except OSError:
        return None
    values = {key.strip(): value for key, _, value in (line.partition("=") for line in lines) if value}
    for key in keys:
        if values.get(key, "").strip():
            return values[key].strip().strip('"')
    return None


def run_quiet(argv: list[str], timeout: int = 60, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr); 127 when the program is missing, 124 on timeout."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    except FileNotFoundError:
        return 127, "", f"{argv[0]}: not found"
    except subprocess.TimeoutExpired:
        return 124, "", f"{' '.join(argv)}: no answer in {timeout} s"
    except OSError as error:
        return 126, "", f"{argv[0]}: {error}"
    return done.returncode, done.stdout, done.stderr


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


# ---- environment: the Ascend host ---------------------------------------------------------------------------------


def check_npu_smi() -> Check:
    if shutil.which("npu-smi") is None:
        return check(
            "npu-smi",
            "fail",
            "npu-smi not found on PATH",
            "install the Ascend driver (npu-smi ships with it); "
            "in a container mount /usr/local/bin/npu-smi, /usr/local/dcmi and /usr/local/Ascend/driver",
        )
    code, out, err = run_quiet(["npu-smi", "info"], timeout=30)
    if code != 0:
        return check(
            "npu-smi",
            "fail",
            f"`npu-smi info` exited {code}: {last_line(err or out)}",
            "check that the driver is loaded (dmesg, /dev/davinci*) and that this user may use the devices",
        )
    found = re.search(r"Version:\s*(\S+)", out)
    return check("npu-smi", "ok", f"npu-smi info: driver {found.group(1) if found else '(version not shown)'}")


def check_driver_firmware(root: str = ASCEND_ROOT) -> list[Check]:
    driver = read_info(f"{root}/driver/version.info")
    firmware = read_info(f"{root}/firmware/version.info")
    return [
        check("driver", "ok", f"{root}/driver/version.info: {driver}")
        if driver
        else check(
            "driver",
            "fail",
            f"no {root}/driver/version.info",
            "install the Ascend NPU driver (Ascend HDK) for this card; in a container mount /usr/local/Ascend/driver",
        ),
        check("firmware", "ok", f"{root}/firmware/version.info: {firmware}")
        if firmware
        else check(
            "firmware",
            "warn",
            f"no {root}/firmware/version.info (containers often lack it)",
            "on the host: install the firmware of the same HDK release as the driver",
        ),
    ]


def cann_install(root: str, environ: dict[str, str]) -> tuple[str | None, str | None]:
    """(the install folder, its version) of the CANN toolkit: ASCEND_TOOLKIT_HOME, else the default install."""
    homes = [
        environ.get("ASCEND_TOOLKIT_HOME", ""),
        f"{root}/ascend-toolkit/latest",
        environ.get("ASCEND_HOME_PATH", ""),
    ]
    for home in [h for h in homes if h]:
        infos = sorted(glob.glob(f"{home}/*/ascend_toolkit_install.info")) + sorted(
            glob.glob(f"{home}/ascend_toolkit_install.info")
        )
        for info in infos:
            version = read_info(info)
            if version:
                return home, version
    return None, None


def check_cann(root: str = ASCEND_ROOT, environ: dict[str, str] | None = None) -> list[Check]:
    environ = dict(os.environ if environ is None else environ)
    home, version = cann_install(root, environ)
    checks = [
        check("CANN toolkit", "ok", f"{home}: CANN {version}")
        if version
        else check(
            "CANN toolkit",
            "fail",
            f"no */ascend_toolkit_install.info under $ASCEND_TOOLKIT_HOME or {root}/ascend-toolkit/latest",
            "install the CANN toolkit (and kernels) of the version your torch-npu release names in its README",
        )
    ]
    ascend_home = environ.get("ASCEND_HOME_PATH", "")
    library_path = environ.get("LD_LIBRARY_PATH", "")
    sourced = bool(ascend_home) and any(p.startswith(ascend_home.rstrip("/")) for p in library_path.split(":") if p)
    checks.append(
        check("set_env.sh", "ok", f"ASCEND_HOME_PATH={ascend_home}, on LD_LIBRARY_PATH")
        if sourced
        else check(
            "set_env.sh",
            "fail",
            f"ASCEND_HOME_PATH={ascend_home or '(unset)'}; no path of CANN's libraries on LD_LIBRARY_PATH"
            " (set_env.sh not sourced in this shell)",
            f"source {home or root + '/ascend-toolkit'}/set_env.sh".replace("/latest/set_env.sh", "/set_env.sh"),
        )
    )
    return checks


def installed(distribution: str) -> str | None:
    from importlib import metadata

    for name in (distribution, distribution.replace("-", "_")):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def public(version: str) -> list[int]:
    """2.5.1+cpu -> [2, 5, 1]; 2.1.0.post3 -> [2, 1, 0] (the numbers before any pre/post/local label)."""
    numbers = re.match(r"\d+(?:\.\d+)*", version)
    return [int(n) for n in numbers.group(0).split(".")] if numbers else []


def torch_matches(torch: str, spec: str) -> bool | None:
    """Whether installed torch ``torch`` satisfies the wheel's ``spec`` (==2.5.1+cpu, ==2.14.0.*); None: cannot tell.
    The local label is ignored (+cpu on x86_64, none on aarch64); a CUDA build is the CUDA check's business."""
    spec = spec.split(";")[0].strip()
    if not spec.startswith("=="):
        return None
    wanted = spec[2:].strip()
    if wanted.endswith(".*"):
        prefix = public(wanted[:-2])
        return public(torch)[: len(prefix)] == prefix
    return public(torch) == public(wanted.split("+")[0])


def release(table: list[dict[str, Any]], version: str | None) -> dict[str, Any] | None:
    return next((entry for entry in table if entry["version"] == version), None)


def required_torch(entry: dict[str, Any], machine: str) -> tuple[str | None, list[str]]:
    if machine in ("aarch64", "arm64"):
        return entry.get("torch_aarch64") or entry.get("torch"), list(entry.get("python_aarch64") or entry["python"])
    return entry.get("torch"), list(entry.get("python") or [])


def check_pairing(
    torch: str | None,
    torch_npu: str | None,
    target: str,
    table: list[dict[str, Any]],
    machine: str | None = None,
    python_tag: str | None = None,
) -> list[Check]:
    """torch / torch-npu installed and paired as the release table says; the Python version against the wheel's tags."""
    machine = machine or platform.machine()
    python_tag = python_tag or f"cp{sys.version_info[0]}{sys.version_info[1]}"
    checks = []
    wanted = release(table, torch_npu or target)
    spec, tags = required_torch(wanted, machine) if wanted else (None, [])
    pin = (spec or "").split(";")[0].lstrip("=").replace(".*", "")
    if torch_npu is None:
        checks.append(
            check(
                "torch-npu",
                "fail",
                "torch-npu is not installed",
                f"pip install torch-npu=={target}" + (f" (with torch=={pin})" if pin else ""),
            )
        )
    elif not wanted:
        checks.append(
            check(
                "torch-npu",
                "warn",
                f"torch-npu {torch_npu} is not in the kit's release table (the port targeted {target})",
                "a release newer than this kit: check its torch pin and Python versions in Ascend/pytorch's README",
            )
        )
    elif torch_npu != target:
        checks.append(
            check(
                "torch-npu",
                "warn",
                f"torch-npu {torch_npu} installed; the port targeted {target}",
                f"the port's API checks used {target}: pip install torch-npu=={target}, or port again "
                f"with --torch-npu {torch_npu}",
            )
        )
    else:
        checks.append(check("torch-npu", "ok", f"torch-npu {torch_npu} (the port's target)"))
    if torch is None:
        checks.append(
            check(
                "torch",
                "fail",
                "torch is not installed",
                f"pip install torch=={pin or 'VERSION'} --index-url https://download.pytorch.org/whl/cpu",
            )
        )
    elif spec:
        match = torch_matches(torch, spec)
        name = torch_npu or target
        if match is False:
            checks.append(
                check(
                    "torch / torch-npu pair",
                    "fail",
                    f"torch-npu {name} requires torch {spec}; torch {torch} is installed",
                    f"pip install torch=={pin} "
                    "--index-url https://download.pytorch.org/whl/cpu (x86_64; plain PyPI on aarch64)",
                )
            )
        else:
            checks.append(
                check(
                    "torch / torch-npu pair",
                    "ok" if match else "warn",
                    f"torch {torch}; torch-npu {name} requires torch {spec}",
                )
            )
    if tags:
        ok = python_tag in tags
        version = f"{python_tag[2]}.{python_tag[3:]}"
        checks.append(
            check(
                "Python",
                "ok" if ok else "fail",
                f"Python {version} ({python_tag}); torch-npu {(wanted or {}).get('version')} wheels "
                f"({machine}): {', '.join(tags)}",
                "" if ok else f"use a Python whose tag is one of {', '.join(tags)}",
            )
        )
    return checks


def probe_torch(code: str, timeout: int = 300, environ: dict[str, str] | None = None) -> tuple[dict | None, str]:
    """Run ``code`` (which prints one JSON line) in a fresh interpreter: (its JSON, "") or (None, the error)."""
    code_, out, err = run_quiet([sys.executable, "-c", code], timeout=timeout, env=environ)
    if code_ == 0 and out.strip():
        try:
            return json.loads(out.strip().splitlines()[-1]), ""
        except ValueError:
            pass
    return None, last_line(err) or f"exit code {code_}"


CUDA_BUILD = "import json, torch; print(json.dumps({'cuda': torch.version.cuda, 'torch': torch.__version__}))"
NPU_DEVICES = (
    "import json, torch, torch_npu\nn = torch.npu.device_count()\n"
    "print(json.dumps({'count': n, 'name': torch.npu.get_device_name(0) if n else None}))"
)
CUDA_DEVICES = (
    "import json, torch\nn = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
    "print(json.dumps({'count': n, 'cuda': torch.version.cuda, "
    "'name': torch.cuda.get_device_name(0) if n else None}))"
)


def check_cuda_beside_npu(torch_npu: str | None) -> Check:
    # autoload off: with torch_npu installed, `import torch` would import it, and its refusal is what we look for
    environ = {**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    found, error = probe_torch(CUDA_BUILD, environ=environ)
    if found is None:
        return check("CUDA torch beside torch_npu", "fail", f"import torch failed: {error}", hint(error))
    if found["cuda"] and torch_npu:
        return check(
            "CUDA torch beside torch_npu",
            "fail",
            f"torch {found['torch']} is a CUDA {found['cuda']} build; "
            "torch_npu raises 'Two accelerators cannot be used at the same time in PyTorch: npu and cuda'",
            hint("Two accelerators cannot be used"),
        )
    kind = f"CUDA {found['cuda']}" if found["cuda"] else "CPU"
    return check("CUDA torch beside torch_npu", "ok", f"torch {found['torch']} is a {kind} build")


def check_npu_devices(target: str) -> list[Check]:
    visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")
    checks = [check("ASCEND_RT_VISIBLE_DEVICES", "ok", visible if visible is not None else "(unset: every device)")]
    found, error = probe_torch(NPU_DEVICES)
    if found is None:
        checks.append(
            check(
                "NPU devices",
                "fail",
                f"import torch_npu / torch.npu.device_count() failed: {error}",
                hint(error).replace("VERSION", target)
                or "read the error above; run `python -c 'import torch_npu'` for the trace",
            )
        )
    elif not found["count"]:
        checks.append(
            check(
                "NPU devices",
                "fail",
                "torch.npu.device_count() is 0",
                "check npu-smi info, the device permissions and ASCEND_RT_VISIBLE_DEVICES",
            )
        )
    else:
        checks.append(check("NPU devices", "ok", f"{found['count']} visible: {found['name']}"))
    return checks


def npu_environment(target: str, table: list[dict[str, Any]]) -> list[Check]:
    torch, torch_npu = installed("torch"), installed("torch-npu")
    return [
        check_npu_smi(),
        *check_driver_firmware(),
        *check_cann(),
        *check_pairing(torch, torch_npu, target, table),
        check_cuda_beside_npu(torch_npu),
        *check_npu_devices(target),
    ]


# ---- environment: a CUDA host standing in for the NPU --------------------------------------------------------------


def cuda_environment() -> list[Check]:
    checks = []
    code, out, err = run_quiet(["nvidia-smi", "--query-gpu=driver_version,name", "--format=csv,noheader"], timeout=30)
    if code == 0 and out.strip():
        checks.append(check("nvidia-smi", "ok", f"driver, GPU: {out.strip().splitlines()[0]}"))
    else:
        checks.append(
            check(
                "nvidia-smi",
                "fail",
                last_line(err or out) or f"exit code {code}",
                "install the NVIDIA driver (nvidia-smi ships with it)",
            )
        )
    torch = installed("torch")
    checks.append(
        check("torch", "ok", f"torch {torch}")
        if torch
        else check("torch", "fail", "torch is not installed", "pip install torch (a CUDA build)")
    )
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    checks.append(check("CUDA_VISIBLE_DEVICES", "ok", visible if visible is not None else "(unset: every device)"))
    found, error = probe_torch(CUDA_DEVICES)
    if found is None:
        checks.append(check("CUDA devices", "fail", f"import torch failed: {error}", hint(error)))
    elif not found["cuda"]:
        checks.append(
            check(
                "CUDA devices",
                "fail",
                "torch is a CPU build (torch.version.cuda is None): no CUDA",
                "install a CUDA build of torch",
            )
        )
    elif not found["count"]:
        checks.append(
            check(
                "CUDA devices",
                "fail",
                f"CUDA {found['cuda']} build, but no CUDA device is available",
                "check nvidia-smi and CUDA_VISIBLE_DEVICES",
            )
        )
    else:
        checks.append(check("CUDA devices", "ok", f"CUDA {found['cuda']}: {found['count']} x {found['name']}"))
    if installed("torch-npu"):
        checks.append(
            check(
                "torch-npu",
                "warn",
                "torch-npu is installed beside a CUDA run",
                "it refuses a CUDA torch; uninstall it in this environment",
            )
        )
    return checks


# ---- the commands --------------------------------------------------------------------------------------------------


def emulator_prefix(target: str | None) -> list[str]:
    """`ascend-port emulate` from this interpreter when ascend_port imports here, else from PATH."""
    import importlib.util

    version = ["--torch-npu", target] if target else []
    if importlib.util.find_spec("ascend_port") is not None:
        cli = "import sys; from ascend_port.cli import main; sys.argv[0] = 'ascend-port'; main()"
        return [sys.executable, "-c", cli, "emulate", *version, "--"]
    program = shutil.which("ascend-port")
    if program is None:
        raise UsageError("--emulate needs ascend-port (pip install ascend-port) in this environment")
    return [program, "emulate", *version, "--"]


def command_argv(argv: list[str]) -> list[str]:
    # `python` in a command means the interpreter that runs the kit: the one with this host's torch / torch_npu
    if argv and re.fullmatch(r"python(3(\.\d+)?)?", argv[0]):
        return [sys.executable, *argv[1:]]
    return list(argv)


def run_command(
    command: dict[str, Any], project: Path, folder: Path, prefix: list[str], timeout: int, losses: int, seed: int | None
) -> dict[str, Any]:
    """Run one command with the probe on PYTHONPATH; its exit code, time, stderr tail and the probe's records."""
    folder.mkdir(parents=True, exist_ok=True)
    probe_out = folder / "probe"
    probe_out.mkdir(exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(KIT / "probe"), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    )
    env["ASCEND_PORT_PROBE_OUT"] = str(probe_out)
    env["ASCEND_PORT_PROBE_LOSSES"] = str(losses)
    if seed is not None:
        env["ASCEND_PORT_PROBE_SEED"] = str(seed)
    argv = prefix + command_argv(command["argv"])
    result: dict[str, Any] = {
        "name": command["name"],
        "argv": command["argv"],
        "run": argv,
        "exit_code": None,
        "timed_out": False,
        "interrupted": False,
        "stderr_tail": [],
        "logs": str(folder),
    }
    start = time.monotonic()
    try:
        with open(folder / "stdout.log", "wb") as out, open(folder / "stderr.log", "wb") as err:
            process = subprocess.Popen(argv, cwd=str(project), env=env, stdout=out, stderr=err, start_new_session=True)
            try:
                result["exit_code"] = process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                result["timed_out"] = True
                stop(process)
            except KeyboardInterrupt:  # the command was stopped: what it recorded is still reported
                result["interrupted"] = True
                stop(process)
    except OSError as error:
        result["stderr_tail"] = [f"cannot run {argv[0]}: {error}"]
    result["seconds"] = round(time.monotonic() - start, 2)
    if result["exit_code"] != 0:
        tail = (folder / "stderr.log").read_text("utf-8", "replace").splitlines()[-STDERR_LINES:]
        result["stderr_tail"] = result["stderr_tail"] or tail
        result["hint"] = hint("\n".join(tail))
    result["probe"] = read_probes(probe_out)
    return result


def stop(process: subprocess.Popen[bytes]) -> None:
    """End the command's process group (the command and what it started: torchrun's workers), TERM then KILL."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except OSError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def read_probes(folder: Path) -> list[dict[str, Any]]:
    probes = []
    for path in sorted(folder.glob("probe-*.json")):
        try:
            probes.append(json.loads(path.read_text("utf-8")))
        except (OSError, ValueError):
            continue
    return probes


def trainer(probes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The process that trained: rank 0 where the probe names ranks, else the one with the most losses (torchrun's
    workers record theirs, the launcher none)."""
    training = [p for p in probes if p.get("losses")]
    ranked = [p for p in training if p.get("rank") in (0, "0")]
    return ranked[0] if ranked else max(training, key=lambda p: len(p["losses"]), default=None)


def recorded_losses(probes: list[dict[str, Any]]) -> list[float]:
    chosen = trainer(probes)
    return [float(x) for x in chosen["losses"]] if chosen else []


# ---- comparison, timings -------------------------------------------------------------------------------------------


def compare(reference: list[float], got: list[float], rtol: float, atol: float) -> dict[str, Any]:
    """Each recorded loss within atol + rtol * |reference| of the CPU reference's, and as many of them."""
    pairs = list(zip(reference, got))
    diffs = [abs(a - b) for a, b in pairs]
    rels = [abs(a - b) / abs(a) if a else (0.0 if a == b else float("inf")) for a, b in pairs]
    bad = [i for i, (a, b) in enumerate(pairs) if not abs(a - b) <= atol + rtol * abs(a)]
    short = len(got) < len(reference)
    reason = ""
    if not got:
        reason = "no losses recorded (the command failed, or never called .backward())"
    elif short:
        reason = f"{len(got)} of {len(reference)} losses recorded"
    elif bad:
        reason = f"{len(bad)} of {len(pairs)} losses outside rtol={rtol:g}, atol={atol:g} (first at step {bad[0]})"
    return {
        "passed": not reason,
        "reason": reason,
        "rtol": rtol,
        "atol": atol,
        "reference": reference,
        "got": got[: len(reference)],
        "max_abs": max(diffs, default=None),
        "max_rel": max(rels, default=None),
    }


def timings(probes: list[dict[str, Any]]) -> dict[str, Any]:
    chosen = trainer(probes) or {}
    steps = [float(s) for s in chosen.get("step_times_s") or []]
    memory = [p["max_memory_bytes"] for p in probes if isinstance(p.get("max_memory_bytes"), (int, float))]
    # the first steps compile operators on an NPU: the median of the later ones is the step time
    later = steps[1:] if len(steps) > 2 else steps
    return {
        "steps": len(steps),
        "first_step_s": steps[0] if steps else None,
        "median_step_s": statistics.median(later) if later else None,
        "peak_memory_bytes": max(memory) if memory else None,
        "wall_s": chosen.get("wall_s"),
    }


# ---- the report ----------------------------------------------------------------------------------------------------


def cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def number(value: float | None, digits: int = 6) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def size(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value / 2**20:.1f} MiB" if value >= 2**20 else f"{value / 2**10:.1f} KiB"


def markdown(report: dict[str, Any]) -> str:
    lines = [f"# ascend-port kit report: {report['project_name']}", ""]
    if report["mode"] == "emulate":
        lines += [f"> **{EMULATED_BANNER}**: the commands ran under `ascend-port emulate` on CPU.", ""]
    elif report["mode"] == "cuda":
        lines += [f"> **{CUDA_BANNER}**", ""]
    lines += [
        f"**Result: {'PASS' if report['passed'] else 'FAIL'}** ({report['summary']})",
        "",
        f"- date: {report['date']}; host: {report['host']}; Python {report['python']}",
        f"- kit: written by ascend-port {report['kit']['ascend_port']} for torch_npu {report['kit']['torch_npu']}; "
        f"project: `{report['project']}`",
        "",
        "## Environment",
        "",
        "| check | status | detail | fix |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {cell(c['name'])} | {c['status']} | {cell(c['detail'])} | {cell(c['fix'])} |" for c in report["environment"]
    ]
    lines += ["", "## Commands", "", "| command | exit | seconds | argv |", "|---|---|---|---|"]
    for run in report["runs"]:
        status = "timed out" if run["timed_out"] else "interrupted" if run["interrupted"] else run["exit_code"]
        lines.append(f"| {cell(run['name'])} | {status} | {run['seconds']} | `{cell(' '.join(run['argv']))}` |")
    for run in report["runs"]:
        if run["exit_code"] != 0:
            lines += [
                "",
                f"`{run['name']}` failed (logs: {run['logs']})" + (f"; fix: {run['hint']}" if run.get("hint") else ""),
                "",
                "```",
            ]
            lines += run["stderr_tail"] or ["(no stderr)"]
            lines += ["```"]
    lines += ["", "## Comparison with the CPU reference", ""]
    if not report["comparisons"]:
        lines.append("No CPU reference in this kit (`ascend-port verify --compare --kit DIR` records one).")
    for name, result in report["comparisons"].items():
        verdict = "PASS" if result["passed"] else f"FAIL: {result['reason']}"
        lines += [
            f"### {name}: {verdict}",
            "",
            f"rtol={result['rtol']:g}, atol={result['atol']:g}; largest difference: abs "
            f"{number(result['max_abs'], 3)}, rel {number(result['max_rel'], 3)}",
            "",
            "| step | CPU reference | this run | abs diff |",
            "|---|---|---|---|",
        ]
        got = result["got"]
        for i, expected in enumerate(result["reference"][:SIDE_BY_SIDE]):
            value = got[i] if i < len(got) else None
            diff = None if value is None else abs(value - expected)
            lines.append(f"| {i} | {number(expected)} | {number(value)} | {number(diff, 3)} |")
        lines.append("")
    lines += [
        "## Step time and memory",
        "",
        "| command | steps | first step | median step | peak device memory | note |",
        "|---|---|---|---|---|---|",
    ]
    for run in report["runs"]:
        t = run["timings"]
        first = "-" if t["first_step_s"] is None else f"{t['first_step_s'] * 1000:.1f} ms"
        median = "-" if t["median_step_s"] is None else f"{t['median_step_s'] * 1000:.1f} ms"
        note = f"**{NO_DEVICE}**" if run.get("no_device") else ""
        lines.append(
            f"| {cell(run['name'])} | {t['steps']} | {first} | {median} | {size(t['peak_memory_bytes'])} | {note} |"
        )
    return "\n".join(lines) + "\n"


# ---- main ----------------------------------------------------------------------------------------------------------


def load(name: str, default: Any = None) -> Any:
    path = KIT / name
    if not path.exists():
        if default is not None:
            return default
        raise UsageError(f"{path} is missing: write the kit again with `ascend-port verify --kit DIR`")
    try:
        return json.loads(path.read_text("utf-8"))
    except ValueError as error:
        raise UsageError(f"{path} is not valid JSON: {error}") from None


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--project", type=Path, default=KIT.parent, help="the ported project (default: the kit's parent)"
    )
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per command (default 1800)")
    parser.add_argument("--only", action="append", metavar="NAME", help="run only this command (repeatable)")
    parser.add_argument("--emulate", action="store_true", help="run under `ascend-port emulate` (no NPU: a kit check)")
    parser.add_argument(
        "--accelerator",
        choices=("npu", "cuda"),
        default="npu",
        help="cuda: the NPU replaced by CUDA (point --project at the original CUDA project)",
    )
    parser.add_argument("--check-only", action="store_true", help="the environment check only")
    parser.add_argument("--rtol", type=float, help="override the reference's relative tolerance")
    parser.add_argument("--atol", type=float, help="override the reference's absolute tolerance")
    parser.add_argument("--out", type=Path, default=KIT / "reports", help="where reports go (default: kit/reports)")
    args = parser.parse_args(argv)
    if args.emulate and args.accelerator == "cuda":
        parser.error("--emulate and --accelerator cuda exclude each other")
    return args


def report_paths(out: Path) -> tuple[Path, str]:
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    name, n = stamp, 1
    while (out / f"kit-report-{name}.md").exists():
        n += 1
        name = f"{stamp}-{n}"
    return out / f"kit-report-{name}.md", name


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    kit, table = load("commands.json"), load("releases.json", [])
    reference = load("reference.json", {}) if (KIT / "reference.json").exists() else {}
    project = args.project.resolve()
    if not project.is_dir():
        print(f"error: --project {project}: not a folder", file=sys.stderr)
        return 2
    commands = [c for c in kit["commands"] if not args.only or c["name"] in args.only]
    if args.only and len(commands) < len(set(args.only)):
        names = ", ".join(c["name"] for c in kit["commands"])
        print(f"error: --only {', '.join(args.only)}: the kit's commands are {names}", file=sys.stderr)
        return 2
    mode = "emulate" if args.emulate else args.accelerator
    if mode == "emulate":
        emulator_prefix(kit.get("emulate_torch_npu"))  # a usage error before anything runs
    args.out.mkdir(parents=True, exist_ok=True)
    path, stamp = report_paths(args.out)
    report: dict[str, Any] = {
        "mode": mode,
        "project": str(project),
        "project_name": kit.get("project", project.name),
        "kit": kit,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "host": f"{platform.node()} ({platform.machine()}, {platform.platform()})",
        "python": platform.python_version(),
        "environment": [],
        "runs": [],
        "comparisons": {},
    }
    if mode == "emulate":
        print(f"*** {EMULATED_BANNER} ***", file=sys.stderr)
    print("[1/4] environment check", file=sys.stderr)
    report["environment"] = cuda_environment() if mode == "cuda" else npu_environment(kit["torch_npu"], table)
    for c in report["environment"]:
        print(
            f"  {c['status']:>4}  {c['name']}: {c['detail']}" + (f"\n        fix: {c['fix']}" if c["fix"] else ""),
            file=sys.stderr,
        )
    interrupted = False
    if not args.check_only:
        interrupted = run_all(args, mode, kit, reference, commands, project, args.out / stamp, report)
    finish(report, mode, interrupted)
    path.write_text(markdown(report), "utf-8")
    path.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n", "utf-8")
    print(markdown(report))
    print(f"report: {path} (and {path.with_suffix('.json').name})", file=sys.stderr)
    return 130 if interrupted else (0 if report["passed"] else 1)


def run_all(
    args: argparse.Namespace,
    mode: str,
    kit: dict[str, Any],
    reference: dict[str, Any],
    commands: list[dict[str, Any]],
    project: Path,
    logs: Path,
    report: dict[str, Any],
) -> bool:
    """Steps 2-4 for each command; True when Ctrl-C stopped them (what ran is kept)."""
    prefix = emulator_prefix(kit.get("emulate_torch_npu")) if mode == "emulate" else []
    expected = {run["name"]: run for run in reference.get("runs", [])}
    count = max([20, *[len(run.get("losses", [])) for run in expected.values()]])
    for i, command in enumerate(commands, 1):
        print(f"[2/4] {i}/{len(commands)} {command['name']}: {' '.join(command['argv'])}", file=sys.stderr)
        try:
            run = run_command(
                command,
                project,
                logs / re.sub(r"[^\w.-]", "_", command["name"]),
                prefix,
                args.timeout,
                count,
                reference.get("seed"),
            )
        except KeyboardInterrupt:
            return True
        run["timings"] = timings(run["probe"])
        run["losses"] = recorded_losses(run["probe"])
        # a command that trained without allocating device memory ran on the CPU: a port that left the device alone
        run["no_device"] = bool(run["losses"]) and not run["timings"]["peak_memory_bytes"]
        report["runs"].append(run)
        print(f"  exit {'timeout' if run['timed_out'] else run['exit_code']} in {run['seconds']} s", file=sys.stderr)
        if command["name"] in expected:
            ref = expected[command["name"]]
            rtol = args.rtol if args.rtol is not None else ref.get("rtol", reference.get("rtol", DEFAULT_RTOL))
            atol = args.atol if args.atol is not None else ref.get("atol", reference.get("atol", DEFAULT_ATOL))
            result = compare([float(x) for x in ref.get("losses", [])], run["losses"], rtol, atol)
            report["comparisons"][command["name"]] = result
            print(f"[3/4] compare: {'pass' if result['passed'] else 'FAIL: ' + result['reason']}", file=sys.stderr)
        t = run["timings"]
        print(
            f"[4/4] steps {t['steps']}, median step {number(t['median_step_s'], 4)} s, peak memory "
            f"{size(t['peak_memory_bytes'])}",
            file=sys.stderr,
        )
        if run["no_device"]:
            print(f"  warning: {NO_DEVICE}", file=sys.stderr)
        if run["interrupted"]:
            return True
    return False


def finish(report: dict[str, Any], mode: str, interrupted: bool) -> None:
    failed_env = [c["name"] for c in report["environment"] if c["status"] == "fail"]
    failed_runs = [r["name"] for r in report["runs"] if r["exit_code"] != 0]
    failed_cmp = [n for n, c in report["comparisons"].items() if not c["passed"]]
    parts = [
        f"{len(report['runs']) - len(failed_runs)}/{len(report['runs'])} commands exited 0",
        f"{len(report['comparisons']) - len(failed_cmp)}/{len(report['comparisons'])} comparisons held",
        f"{len(failed_env)} environment check(s) failed" + (f" ({', '.join(failed_env)})" if failed_env else ""),
    ]
    # under --emulate the host is not the NPU host: its environment is reported, not held against the run
    env_ok = mode == "emulate" or not failed_env
    if mode == "emulate" and failed_env:
        parts[-1] += ", not held against an emulated run"
    if interrupted:
        parts.append("interrupted by Ctrl-C")
    report["summary"] = "; ".join(parts)
    report["passed"] = not (failed_runs or failed_cmp or interrupted) and env_ok


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
