"""What the checks read of a host, each read once: the driver and firmware version files, the CANN toolkit, the
``npu-smi info`` table and the target Python's torch and torch-npu versions."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ascend_port.doctor.environment import Completed, Environment

ASCEND = "/usr/local/Ascend"
DRIVER_INFO = f"{ASCEND}/driver/version.info"
FIRMWARE_INFO = f"{ASCEND}/firmware/version.info"
# Where CANN's installer puts the toolkit: as root, as a user ($HOME/Ascend), and CANN 8.5+'s cann/ folder.
TOOLKIT_HOMES = (f"{ASCEND}/ascend-toolkit/latest", f"{ASCEND}/cann", "~/Ascend/ascend-toolkit/latest")

# Prints the versions of the target Python and of its torch and torch-npu from their metadata: nothing is imported
# (torch_npu without CANN breaks even `import torch`).
VERSIONS_PROBE = (
    "import importlib.metadata as m, json, platform\n"
    "def v(name):\n"
    "    try:\n"
    "        return m.version(name)\n"
    "    except m.PackageNotFoundError:\n"
    "        return None\n"
    "print(json.dumps({'python': platform.python_version(), 'machine': platform.machine(),"
    " 'torch': v('torch'), 'torch_npu': v('torch-npu')}))\n"
)
# --full: whether torch_npu loads and sees the devices, in the target Python (the doctor's own process never imports
# it).
RUNTIME_PROBE = (
    "import json, torch, torch_npu\n"
    "print(json.dumps({'available': torch.npu.is_available(), 'count': torch.npu.device_count()}))\n"
)


def read_info(path: Path) -> dict[str, str]:
    """A ``key=value`` file (version.info, ascend_toolkit_install.info), keys lowercased; {} when absent."""
    if not path.is_file():
        return {}
    pairs = (line.split("=", 1) for line in path.read_text("utf-8", errors="replace").splitlines() if "=" in line)
    return {key.strip().lower(): value.strip() for key, value in pairs}


@dataclass(frozen=True)
class Toolkit:
    home: Path  # the file under the environment's root
    version: str | None


@dataclass(frozen=True)
class Chip:
    npu: int
    name: str
    health: str


@dataclass(frozen=True)
class SmiTable:
    version: str | None
    chips: tuple[Chip, ...]

    @property
    def family(self) -> str | None:
        """The chip family of the pairing table ("910b", "310p"), from the first chip's name."""
        name = self.chips[0].name.upper() if self.chips else ""
        return "310p" if "310P" in name else "910b" if "910" in name else None


def parse_npu_smi(output: str) -> SmiTable:
    """``npu-smi info``: the version line, then per chip a row ``| NPU  Name | Health | ...`` (a second row holds
    the chip and bus ids; Atlas A3 prints two chips per NPU). The rows below a name row and the process table have
    a bus id or a process id where the name row has the health word."""
    version = re.search(r"npu-smi\s+\S+\s+Version:\s*(\S+)", output)
    chips = []
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2:
            continue
        m = re.fullmatch(r"(\d+)\s+(\S.*)", cells[0])
        if m and re.fullmatch(r"[A-Za-z]+", cells[1]):
            chips.append(Chip(int(m.group(1)), m.group(2).strip(), cells[1]))
    return SmiTable(version.group(1) if version else None, tuple(chips))


class Host:
    """One host as the checks see it; every fact is read at most once."""

    def __init__(self, env: Environment) -> None:
        self.env = env

    @cached_property
    def driver(self) -> dict[str, str]:
        return read_info(self.env.path(DRIVER_INFO))

    @cached_property
    def firmware(self) -> dict[str, str]:
        return read_info(self.env.path(FIRMWARE_INFO))

    @cached_property
    def device_nodes(self) -> list[str]:
        dev = self.env.path("/dev")
        return sorted(p.name for p in dev.glob("davinci[0-9]*")) if dev.is_dir() else []

    @cached_property
    def smi_result(self) -> Completed | None:
        return self.env.run("npu-smi-info", ["npu-smi", "info"], 30)

    @cached_property
    def smi(self) -> SmiTable | None:
        done = self.smi_result
        return parse_npu_smi(done.stdout) if done is not None and done.returncode == 0 else None

    @cached_property
    def has_npu(self) -> bool:
        """An NPU host: its driver is installed, a device node exists or npu-smi answers."""
        return bool(self.env.path(f"{ASCEND}/driver").is_dir() or self.device_nodes or self.smi_result)

    def _expand(self, home: str) -> Path:
        if home.startswith("~"):
            home = self.env.environ.get("HOME", "/root") + home[1:]
        return self.env.path(home)

    @cached_property
    def toolkits(self) -> list[Toolkit]:
        """The CANN toolkits: the one ASCEND_HOME_PATH names (set_env.sh sourced), then those in the usual places."""
        named = [self.env.environ.get(n, "") for n in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")]
        found: dict[Path, Toolkit] = {}
        for home in [h for h in named if h.startswith("/")] + list(TOOLKIT_HOMES):
            folder = self._expand(home.rstrip("/"))
            installed = any(folder.glob("*-linux/ascend_toolkit_install.info")) if folder.is_dir() else False
            if installed or (folder / "set_env.sh").is_file() or (folder.parent / "set_env.sh").is_file():
                found.setdefault(folder.resolve(), Toolkit(folder, toolkit_version(folder)))
        return list(found.values())

    @cached_property
    def versions(self) -> dict[str, str | None] | None:
        """The target Python's versions (python, machine, torch, torch_npu); None when it did not answer."""
        done = self.env.run("python-versions", [self.env.python, "-c", VERSIONS_PROBE], 60)
        if done is None or done.returncode != 0:
            return None
        try:
            data = json.loads(done.stdout.strip().splitlines()[-1])
        except (json.JSONDecodeError, IndexError):
            return None
        return data if isinstance(data, dict) else None

    def runtime(self) -> Completed | None:
        return self.env.run("python-runtime", [self.env.python, "-c", RUNTIME_PROBE], 180)


def toolkit_version(home: Path) -> str | None:
    """CANN's version: ``<arch>-linux/ascend_toolkit_install.info`` (``version=8.0.RC3``), else the name of the
    folder itself or of the one ``latest`` links to (``8.0.RC3``, ``cann-8.5.0``). (``compiler/version.info``
    holds the compiler's own version, not CANN's.)"""
    for info in sorted(home.glob("*-linux/ascend_toolkit_install.info")):
        if version := read_info(info).get("version"):
            return version
    found = re.search(r"\d+\.\d+(?:\.[0-9A-Za-z]+)*", home.resolve().name)  # 8.0.RC3, cann-8.5.0
    return found.group(0) if found else None
