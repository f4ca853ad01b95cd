"""`ascend-port doctor`'s checks: each reads the Host (and through it the Environment) and says what it found and,
for a problem, the command that fixes it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ascend_port.core import npu_api
from ascend_port.doctor import versions
from ascend_port.doctor.environment import Environment
from ascend_port.doctor.host import DRIVER_INFO, FIRMWARE_INFO, Host

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
STATUSES = (OK, WARN, FAIL, SKIP)
HDK_DOWNLOADS = "https://www.hiascend.com/hardware/firmware-drivers/community"
CANN_DOWNLOADS = "https://www.hiascend.com/cann/download"
CPU_WHEELS = "https://download.pytorch.org/whl/cpu"


@dataclass(frozen=True)
class Finding:
    id: str
    title: str
    status: str
    found: str
    fix: str | None = None


@dataclass(frozen=True)
class Report:
    npu_host: bool
    full: bool
    findings: list[Finding] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(f.status == FAIL for f in self.findings)

    def counts(self) -> dict[str, int]:
        return {status: sum(f.status == status for f in self.findings) for status in STATUSES}


Check = Callable[[Host], Iterator[Finding]]


def _driver(host: Host) -> Iterator[Finding]:
    version = host.driver.get("version") or host.driver.get("package_version")
    if version:
        yield Finding("driver", "NPU driver", OK, f"driver {version} ({DRIVER_INFO})")
    else:
        yield Finding(
            "driver",
            "NPU driver",
            FAIL,
            f"no driver version: {DRIVER_INFO} is missing (in a container: /usr/local/Ascend/driver is not mounted)",
            f"install the Ascend HDK npu-driver .run package as root ({HDK_DOWNLOADS}), or in a container mount it: "
            "docker run -v /usr/local/Ascend/driver:/usr/local/Ascend/driver:ro ...",
        )


def _firmware(host: Host) -> Iterator[Finding]:
    version = host.firmware.get("version")
    if version:
        yield Finding("firmware", "NPU firmware", OK, f"firmware {version} ({FIRMWARE_INFO})")
    else:
        # A container sees no firmware folder: the host's is what counts, so this is only a warning.
        yield Finding(
            "firmware",
            "NPU firmware",
            WARN,
            f"no firmware version: {FIRMWARE_INFO} is missing (normal inside a container)",
            f"on the host: cat {FIRMWARE_INFO}, or install the Ascend HDK npu-firmware .run package ({HDK_DOWNLOADS})",
        )


def _toolkit(host: Host) -> Iterator[Finding]:
    if not host.toolkits:
        yield Finding(
            "cann.toolkit",
            "CANN toolkit",
            FAIL,
            "no CANN toolkit in /usr/local/Ascend/ascend-toolkit, /usr/local/Ascend/cann or ~/Ascend/ascend-toolkit",
            f"install CANN (Ascend-cann-toolkit_<version>_linux-$(arch).run --install, then the kernels package for the "
            f"chip): {CANN_DOWNLOADS}",
        )
        return
    kit = host.toolkits[0]
    where = host.env.host_path(kit.home)
    version = kit.version or "of unknown version"
    yield Finding("cann.toolkit", "CANN toolkit", OK, f"CANN {version} in {where}")


def _set_env(host: Host) -> str:
    kit = host.toolkits[0].home
    # set_env.sh sits in the toolkit's folder or beside the `latest` link (ascend-toolkit/set_env.sh)
    script = kit / "set_env.sh" if (kit / "set_env.sh").is_file() else kit.parent / "set_env.sh"
    return f"source {host.env.host_path(script)}"


def _sourced(host: Host) -> Iterator[Finding]:
    title = "CANN environment (set_env.sh)"
    if not host.toolkits:
        yield Finding("cann.sourced", title, SKIP, "no CANN toolkit")
        return
    environ = host.env.environ
    home = environ.get("ASCEND_HOME_PATH") or environ.get("ASCEND_TOOLKIT_HOME")
    libraries = [p.rstrip("/") for p in environ.get("LD_LIBRARY_PATH", "").split(":") if p]
    if not home:
        yield Finding(
            "cann.sourced",
            title,
            FAIL,
            "set_env.sh is not sourced: ASCEND_HOME_PATH and ASCEND_TOOLKIT_HOME are unset (import torch_npu fails: "
            "libhccl.so: cannot open shared object file)",
            f"{_set_env(host)}  (add it to ~/.bashrc or the job script)",
        )
        return
    problems = []
    if not host.env.path(home).is_dir():
        problems.append(f"ASCEND_HOME_PATH={home} is no folder")
    if f"{home.rstrip('/')}/lib64" not in libraries:
        problems.append(f"LD_LIBRARY_PATH lacks {home.rstrip('/')}/lib64")
    if not environ.get("ASCEND_OPP_PATH"):
        problems.append("ASCEND_OPP_PATH is unset")
    if problems:
        yield Finding("cann.sourced", title, FAIL, "; ".join(problems), _set_env(host))
    else:
        yield Finding("cann.sourced", title, OK, f"sourced: ASCEND_HOME_PATH={home}, its lib64 on LD_LIBRARY_PATH")


def _driver_pairing(host: Host) -> Iterator[Finding]:
    title = "driver and firmware for this CANN"
    driver = host.driver.get("version")
    kit = host.toolkits[0].version if host.toolkits else None
    family = host.smi.family if host.smi else None
    if not (driver and kit):
        yield Finding("driver.pairing", title, SKIP, "needs the driver and the CANN versions")
        return
    wanted = versions.driver_for(kit, family or "910b")
    if wanted is None:
        yield Finding("driver.pairing", title, SKIP, f"no driver pairing known for CANN {kit} (table: up to 8.2.RC1)")
        return
    if versions.version_key(driver) < versions.version_key(wanted.driver):
        yield Finding(
            "driver.pairing",
            title,
            FAIL,
            f"driver {driver} is older than {wanted.driver}, the one CANN {kit} is installed with "
            f"({wanted.chip}): the runtime fails to open the device or misses features",
            f"upgrade the driver and firmware to Ascend HDK {wanted.driver.upper()} or newer (npu-driver, then "
            f"npu-firmware {wanted.firmware}; reboot): {HDK_DOWNLOADS}",
        )
        return
    firmware = host.firmware.get("version")
    if firmware and versions.version_key(firmware) < versions.version_key(wanted.firmware):
        yield Finding(
            "driver.pairing",
            title,
            WARN,
            f"firmware {firmware} is older than {wanted.firmware}, the one CANN {kit} is installed with",
            f"install npu-firmware {wanted.firmware} or newer (Ascend HDK {wanted.driver.upper()}): {HDK_DOWNLOADS}",
        )
        return
    yield Finding("driver.pairing", title, OK, f"driver {driver} is at least {wanted.driver} (CANN {kit})")


def _torch(host: Host) -> Iterator[Finding]:
    title = "torch and torch-npu installed"
    found = host.versions
    if found is None:
        yield Finding(
            "torch.installed",
            title,
            FAIL,
            f"the target Python did not answer: {host.env.python}",
            "pass the project's interpreter: ascend-port doctor --python /path/to/venv/bin/python",
        )
        return
    torch, torch_npu = found.get("torch"), found.get("torch_npu")
    where = f"python {found.get('python')} ({host.env.python})"
    kit = host.toolkits[0].version if host.toolkits else None
    if not torch:
        # the newest pair released with this host's CANN, else the newest release
        paired = [p for p in versions.torch_npu_pairings() if kit and versions.same_release(p.cann, kit)]
        newest = paired[0].torch_npu if paired else npu_api.newest_release()
        yield Finding("torch.installed", title, FAIL, f"torch is not installed in {where}", _reinstall(newest))
        return
    if "+cu" in torch or "+rocm" in torch:
        base = torch.split("+")[0]
        yield Finding(
            "torch.installed",
            title,
            FAIL,
            f"torch {torch} is a CUDA/ROCm build: torch_npu refuses it (Two accelerators cannot be used at the same "
            "time in PyTorch)",
            f"pip install --force-reinstall torch=={base} --index-url {CPU_WHEELS}",
        )
        return
    if not torch_npu:
        better = versions.torch_npu_for(torch, kit) if kit else None
        nearest, exact = npu_api.nearest_release(torch)
        fix = f"pip install torch-npu=={better or nearest.version}" if better or exact else _reinstall(nearest.version)
        yield Finding("torch.installed", title, FAIL, f"torch {torch} without torch-npu in {where}", fix)
        return
    yield Finding("torch.installed", title, OK, f"torch {torch}, torch-npu {torch_npu} in {where}")


def _torch_of(release: str) -> str:
    found = next((r for r in npu_api.published_releases() if r.version == release), None)
    return (found.torch_version if found else None) or release.split(".post")[0]


def _reinstall(release: str) -> str:
    return f"pip install torch=={_torch_of(release)} --index-url {CPU_WHEELS} && pip install torch-npu=={release}"


def _pairing(host: Host) -> Iterator[Finding]:
    title = "torch / torch-npu pairing"
    found = host.versions or {}
    torch, torch_npu = found.get("torch"), found.get("torch_npu")
    if not (torch and torch_npu):
        yield Finding("torch.pairing", title, SKIP, "needs torch and torch-npu")
        return
    release = next((r for r in npu_api.published_releases() if r.version == torch_npu.split("+")[0]), None)
    required = release.torch_version if release else None
    if required is None:
        yield Finding("torch.pairing", title, SKIP, f"torch-npu {torch_npu} is not a known release")
        return
    if required != torch.split("+")[0]:
        kit = host.toolkits[0].version if host.toolkits else None
        better = versions.torch_npu_for(torch, kit) if kit else None
        paired, exact = npu_api.nearest_release(torch)
        fix = f"pip install torch-npu=={better or paired.version}" if better or exact else _reinstall(torch_npu)
        yield Finding(
            "torch.pairing",
            title,
            FAIL,
            f"torch-npu {torch_npu} is built for torch {required}, not the installed torch {torch} "
            "(undefined symbol errors on import)",
            fix,
        )
        return
    yield Finding("torch.pairing", title, OK, f"torch-npu {torch_npu} is built for torch {required}")


def _cann_pairing(host: Host) -> Iterator[Finding]:
    title = "torch-npu / CANN pairing"
    found = host.versions or {}
    torch, torch_npu = found.get("torch"), found.get("torch_npu")
    kit = host.toolkits[0].version if host.toolkits else None
    if not (torch and torch_npu and kit):
        yield Finding("cann.pairing", title, SKIP, "needs torch-npu and the CANN version")
        return
    paired = versions.cann_for_torch_npu(torch_npu)
    if paired is None:
        yield Finding("cann.pairing", title, SKIP, f"torch-npu {torch_npu} is not in the compatibility table")
        return
    if versions.same_release(paired, kit):
        yield Finding("cann.pairing", title, OK, f"torch-npu {torch_npu} is released with CANN {kit}")
        return
    better = versions.torch_npu_for(torch, kit)
    fix = f"pip install torch-npu=={better}" if better else f"install CANN {paired} ({CANN_DOWNLOADS})"
    older = versions.version_key(kit) < versions.version_key(paired)
    yield Finding(
        "cann.pairing",
        title,
        FAIL if older else WARN,
        f"torch-npu {torch_npu} is released with CANN {paired}, this host has CANN {kit}"
        + (" (older: its operators and libraries may be missing)" if older else " (not a tested pair)"),
        fix,
    )


def _visible_ids(value: str) -> list[int] | None:
    parts = [p.strip() for p in value.split(",") if p.strip()]
    return [int(p) for p in parts] if all(re.fullmatch(r"\d+", p) for p in parts) else None


def _devices(host: Host) -> Iterator[Finding]:
    title = "visible devices"
    if host.smi_result is None:
        yield Finding(
            "devices",
            title,
            WARN,
            "npu-smi is not on PATH (a container needs /usr/local/bin/npu-smi and /usr/local/dcmi mounted)",
            "export PATH=$PATH:/usr/local/bin  (in a container: -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi "
            "-v /usr/local/dcmi:/usr/local/dcmi --device /dev/davinci0 --device /dev/davinci_manager ...)",
        )
    elif host.smi is None or not host.smi.chips:
        error = (host.smi_result.stderr or host.smi_result.stdout).strip().splitlines()
        yield Finding(
            "devices",
            title,
            FAIL,
            "npu-smi info lists no device" + (f": {error[-1]}" if error else ""),
            "check the driver is loaded (lsmod | grep drv_davinci; dmesg | grep -i davinci); reinstall the driver "
            "or reboot",
        )
    else:
        chips = host.smi.chips
        sick = [c for c in chips if c.health.upper() != "OK"]
        names = sorted({c.name for c in chips})
        summary = f"npu-smi {host.smi.version or '?'}: {len(chips)} chips ({', '.join(names)})"
        if sick:
            listed = ", ".join(sorted({f"NPU {c.npu} {c.health}" for c in sick}))
            yield Finding(
                "devices",
                title,
                WARN,
                f"{summary}; not healthy: {listed}",
                f"npu-smi info -t health -i {sick[0].npu}  (the error code says which part)",
            )
        else:
            yield Finding("devices", title, OK, f"{summary}, all OK")
    yield from _visible_variable(host)


def _visible_variable(host: Host) -> Iterator[Finding]:
    value = host.env.environ.get("ASCEND_RT_VISIBLE_DEVICES")
    title = "ASCEND_RT_VISIBLE_DEVICES"
    if value is None:
        return
    ids = _visible_ids(value)
    count = len(host.smi.chips) if host.smi else None
    if ids is None or not ids:
        yield Finding(
            "devices.visible_env", title, FAIL, f"ASCEND_RT_VISIBLE_DEVICES={value!r}: not a list of ids", _export(ids)
        )
    elif ids != sorted(set(ids)):
        yield Finding(
            "devices.visible_env",
            title,
            FAIL,
            f"ASCEND_RT_VISIBLE_DEVICES={value}: the ids must be ascending and distinct",
            _export(sorted(set(ids))),
        )
    elif count is not None and max(ids) >= count:
        present = [i for i in ids if i < count]
        yield Finding(
            "devices.visible_env",
            title,
            FAIL,
            f"ASCEND_RT_VISIBLE_DEVICES={value}: this host has {count} chips (ids 0-{count - 1})",
            _export(present or list(range(count))),
        )
    else:
        yield Finding("devices.visible_env", title, OK, f"ASCEND_RT_VISIBLE_DEVICES={value}")


def _export(ids: list[int] | None) -> str:
    return f"export ASCEND_RT_VISIBLE_DEVICES={','.join(map(str, ids))}" if ids else "unset ASCEND_RT_VISIBLE_DEVICES"


# CUDA-era variables torch_npu does not read, with the name it reads instead (shared/reference/ascend-api-facts.md).
RENAMED = {
    "CUDA_VISIBLE_DEVICES": "ASCEND_RT_VISIBLE_DEVICES",
    "CUDA_LAUNCH_BLOCKING": "ASCEND_LAUNCH_BLOCKING",
    "PYTORCH_CUDA_ALLOC_CONF": "PYTORCH_NPU_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING": "PYTORCH_NO_NPU_MEMORY_CACHING",
    "NCCL_SOCKET_IFNAME": "HCCL_SOCKET_IFNAME",
    "NCCL_ALGO": "HCCL_ALGO",
    "NCCL_BUFFSIZE": "HCCL_BUFFSIZE",
}


def _cuda_variables(host: Host) -> Iterator[Finding]:
    environ = host.env.environ
    names = [n for n in sorted(environ) if n in RENAMED or n.startswith("TORCH_NCCL_")]
    for name in names:
        target = RENAMED.get(name) or "TORCH_HCCL_" + name.removeprefix("TORCH_NCCL_")
        value = environ[name]
        if name == "NCCL_BUFFSIZE" and value.isdigit():
            value = str(max(1, int(value) // (1 << 20)))  # NCCL counts bytes, HCCL megabytes
        have = environ.get(target)
        if have is not None:
            found = f"{name}={environ[name]} is left over; torch_npu reads {target}={have}"
            fix = f"unset {name}"
        else:
            found = f"{name}={environ[name]} is set but torch_npu reads {target}, which is unset"
            fix = f"export {target}={value} && unset {name}"
        if name == "CUDA_VISIBLE_DEVICES":
            found += " (every NPU stays visible)"
        yield Finding(f"env.{name}", f"{name} left from CUDA", WARN, found, fix)
    if not names:
        yield Finding("env.cuda", "variables left from CUDA", OK, "none (CUDA_VISIBLE_DEVICES, NCCL_*, ... unset)")


LOOPBACK = ("localhost", "127.0.0.1", "::1", "")


def _int(value: str | None) -> int | None:
    return int(value) if value and value.strip().isdigit() else None


def _multi_host_reasons(host: Host) -> list[str]:
    environ = host.env.environ
    reasons = []
    for name in ("NNODES", "PET_NNODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES"):
        if (n := _int(environ.get(name))) and n > 1:
            reasons.append(f"{name}={n}")
    world = _int(environ.get("WORLD_SIZE"))
    local = len(host.smi.chips) if host.smi and host.smi.chips else None
    if visible := _visible_ids(environ.get("ASCEND_RT_VISIBLE_DEVICES", "")):
        local = len(visible)
    if world and local and world > local:
        reasons.append(f"WORLD_SIZE={world} > {local} local chips")
    master = environ.get("MASTER_ADDR", "")
    remote = master not in LOOPBACK and not master.startswith("127.")
    # A remote MASTER_ADDR alone may be this host's own address (one node of 8 chips): it counts only beside the
    # others, or when the local chips are unknown.
    if world and world > 1 and remote and (reasons or local is None):
        reasons.append(f"MASTER_ADDR={master}")
    return reasons


def _hccl(host: Host) -> Iterator[Finding]:
    environ = host.env.environ
    reasons = _multi_host_reasons(host)
    if not reasons:
        yield Finding("hccl", "HCCL for several hosts", SKIP, "single host (no NNODES>1, WORLD_SIZE or MASTER_ADDR)")
        return
    why = ", ".join(reasons)
    for name, value, what in (
        ("HCCL_CONNECT_TIMEOUT", "1200", "ranks that start late time out after the default 120 s"),
        ("HCCL_EXEC_TIMEOUT", "1800", "a long collective on a large job can outrun its default"),
    ):
        if environ.get(name):
            yield Finding(f"hccl.{name}", name, OK, f"{name}={environ[name]}")
        else:
            yield Finding(
                f"hccl.{name}", name, WARN, f"several hosts ({why}) and {name} unset: {what}", f"export {name}={value}"
            )
    if environ.get("HCCL_IF_IP") or environ.get("HCCL_SOCKET_IFNAME"):
        chosen = "HCCL_IF_IP" if environ.get("HCCL_IF_IP") else "HCCL_SOCKET_IFNAME"
        yield Finding("hccl.interface", "HCCL network interface", OK, f"{chosen}={environ[chosen]}")
    else:
        known = environ.get("NCCL_SOCKET_IFNAME") or environ.get("GLOO_SOCKET_IFNAME")
        master = environ.get("MASTER_ADDR", "$MASTER_ADDR")
        fix = (
            f"export HCCL_SOCKET_IFNAME={known}"
            if known
            else f"export HCCL_SOCKET_IFNAME=$(ip -o route get {master} | sed -n 's/.* dev \\([^ ]*\\).*/\\1/p')"
        )
        yield Finding(
            "hccl.interface",
            "HCCL network interface",
            WARN,
            f"several hosts ({why}) and neither HCCL_IF_IP nor HCCL_SOCKET_IFNAME set: HCCL may pick an interface "
            "the other hosts cannot reach",
            fix,
        )


def _health(host: Host) -> Iterator[Finding]:
    """--full: each NPU's health as ``npu-smi info -t health -i N`` reports it."""
    if not host.smi or not host.smi.chips:
        yield Finding("devices.health", "device health (npu-smi -t health)", SKIP, "no device listed")
        return
    for npu in sorted({c.npu for c in host.smi.chips}):
        done = host.env.run(f"npu-smi-health-{npu}", ["npu-smi", "info", "-t", "health", "-i", str(npu)], 30)
        text = done.stdout if done else ""
        health = re.search(r"Health(?:y)?\s+Status\s*:\s*(\S+)", text)
        code = re.search(r"Error\s+Code\s*:\s*(\S+)", text)
        status = health.group(1) if health else "unknown"
        if status.upper() == "OK":
            yield Finding(f"devices.health.{npu}", f"NPU {npu} health", OK, "OK")
        else:
            yield Finding(
                f"devices.health.{npu}",
                f"NPU {npu} health",
                FAIL if health else WARN,
                f"health {status}" + (f", error code {code.group(1)}" if code else ""),
                f"npu-smi info -t health -i {npu}; look the error code up in the Ascend HDK fault manual, then "
                f"npu-smi set -t reset -i {npu} -c 0 (root, no job running)",
            )


def _runtime(host: Host) -> Iterator[Finding]:
    """--full: torch_npu loads in the target Python and sees the devices."""
    title = "torch_npu loads and sees the NPUs"
    if not (host.versions or {}).get("torch_npu"):
        yield Finding("torch_npu.runtime", title, SKIP, "torch-npu is not installed")
        return
    done = host.runtime()
    lines = (done.stderr or done.stdout).strip().splitlines() if done else []
    data = None
    if done is not None and done.returncode == 0:
        try:
            data = json.loads(done.stdout.strip().splitlines()[-1])
        except (json.JSONDecodeError, IndexError):
            data = None
    if not isinstance(data, dict):
        last = lines[-1] if lines else "no answer"
        fix = (
            _set_env(host)
            if host.toolkits and ".so" in last
            else "python -c 'import torch, torch_npu' (read the error)"
        )
        yield Finding("torch_npu.runtime", title, FAIL, f"import torch_npu failed: {last}", fix)
    elif not data.get("available") or not data.get("count"):
        yield Finding(
            "torch_npu.runtime",
            title,
            FAIL,
            "torch.npu.is_available() is False",
            "check ASCEND_RT_VISIBLE_DEVICES and that the user is in the HwHiAiUser group (ls -l /dev/davinci*)",
        )
    else:
        yield Finding("torch_npu.runtime", title, OK, f"torch.npu.device_count() = {data['count']}")


CHECKS: tuple[tuple[str, Check], ...] = (
    ("the NPU driver version (/usr/local/Ascend/driver/version.info)", _driver),
    ("the firmware version (/usr/local/Ascend/firmware/version.info)", _firmware),
    ("the CANN toolkit found and its version", _toolkit),
    ("set_env.sh sourced: ASCEND_HOME_PATH, ASCEND_OPP_PATH, LD_LIBRARY_PATH", _sourced),
    ("the driver and firmware recent enough for that CANN", _driver_pairing),
    ("torch and torch-npu installed in the target Python (a CPU torch build)", _torch),
    ("torch-npu built for the installed torch", _pairing),
    ("torch-npu released with the installed CANN", _cann_pairing),
    ("the devices npu-smi lists, and ASCEND_RT_VISIBLE_DEVICES", _devices),
    ("variables left from CUDA (CUDA_VISIBLE_DEVICES, PYTORCH_CUDA_ALLOC_CONF, NCCL_*)", _cuda_variables),
    ("HCCL for several hosts: HCCL_CONNECT_TIMEOUT, HCCL_EXEC_TIMEOUT, HCCL_IF_IP/HCCL_SOCKET_IFNAME", _hccl),
)
FULL_CHECKS: tuple[tuple[str, Check], ...] = (
    ("each NPU's health (npu-smi info -t health -i N)", _health),
    ("torch_npu imported in the target Python sees the NPUs", _runtime),
)


def what_doctor_checks(full: bool) -> list[str]:
    return [what for what, _ in CHECKS + (FULL_CHECKS if full else ())]


def diagnose(env: Environment, full: bool = False) -> Report:
    """Every check on this environment; on a host without an NPU, none (the report says so)."""
    host = Host(env)
    if not host.has_npu:
        return Report(npu_host=False, full=full)
    findings = [f for _, check in CHECKS + (FULL_CHECKS if full else ()) for f in check(host)]
    return Report(npu_host=True, full=full, findings=findings)
