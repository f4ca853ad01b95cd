"""The kit for a real Ascend host (`ascend-port verify --kit DIR`): a self-contained folder that a user copies next to
the ported project and runs with plain Python + torch + torch_npu: `python kit/run_kit.py --project .`.

The folder holds the runner (``kit_files/run_kit.py``, stdlib only), its README, the commands (``commands.json``), the
CPU reference losses with the tolerances to hold (``reference.json``), the probe that records losses, step times and
memory (a copy of ``ascend_port/verify/probe/``) and the torch / torch-npu release table (``releases.json``).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

from ascend_port import __version__
from ascend_port.core import npu_api

KIT_FILES = Path(__file__).resolve().parent / "kit_files"
PROBE = Path(__file__).resolve().parent / "probe"
COPIED = ("run_kit.py", "README.md")
WRITTEN = ("commands.json", "reference.json", "releases.json", "probe")
# Loss tolerances (rtol, atol) of an accelerator run against the CPU reference, per compute dtype. fp32: an NPU's fp32
# matmuls and reductions accumulate in another order than CPU's (and HF32 is off by default), so a few steps of
# training stay within ~1e-4 relative; 1e-3 leaves room for longer runs. bf16: an NPU's bf16 matmuls (Cube units,
# their own accumulation and rounding) drift from CPU's bf16 by ~1e-2 over a few steps, more than the ~5e-3 between
# CPU and the emulator, which computes on CPU. fp16 sits between (more mantissa than bf16, loss scaling).
TOLERANCES: dict[str, tuple[float, float]] = {"fp32": (1e-3, 1e-4), "fp16": (1e-2, 5e-3), "bf16": (3e-2, 2e-2)}


class KitError(Exception):
    """A kit that cannot be written: the message names the file and the reason."""


def release_table() -> list[dict[str, Any]]:
    """Every published torch-npu release with the torch it pins and the Python tags of its wheels, oldest first."""
    return [
        {**dataclasses.asdict(release), "torch_version": release.torch_version}
        for release in npu_api.published_releases()
    ]


def _emulated(torch_npu: str) -> str | None:
    """The release `run_kit.py --emulate` asks the emulator for: the covered release of the target's torch line
    (the emulator knows the API of one release per torch version); None: the emulator's default."""
    try:
        return npu_api.covered_release(torch_npu)
    except ValueError:
        return None


def _check_commands(commands: list[dict]) -> list[dict[str, Any]]:
    names: set[str] = set()
    checked = []
    for i, command in enumerate(commands):
        name, argv = command.get("name"), command.get("argv")
        if not isinstance(name, str) or not name:
            raise KitError(f"command {i}: no name (commands are {{'name': str, 'argv': [str]}})")
        if not isinstance(argv, list) or not argv or not all(isinstance(word, str) for word in argv):
            raise KitError(f"command {name!r}: argv must be a non-empty list of strings, got {argv!r}")
        if name in names:
            raise KitError(f"command {name!r}: two commands have this name (the reference matches runs by name)")
        names.add(name)
        checked.append({"name": name, "argv": list(argv)})
    return checked


def _check_reference(reference: dict, names: set[str]) -> dict[str, Any]:
    """The reference with its tolerances (the fp32 defaults where it has none); its runs must be the kit's commands."""
    runs = reference.get("runs")
    if not isinstance(runs, list):
        raise KitError("reference: no 'runs' list ({'seed', 'rtol', 'atol', 'runs': [{'name', 'argv', 'losses'}]})")
    for run in runs:
        if run.get("name") not in names:
            raise KitError(f"reference run {run.get('name')!r} is not one of the kit's commands ({', '.join(names)})")
        if not all(isinstance(x, (int, float)) for x in run.get("losses", [])):
            raise KitError(f"reference run {run['name']!r}: losses must be numbers")
    rtol, atol = TOLERANCES["fp32"]
    return {**reference, "rtol": reference.get("rtol", rtol), "atol": reference.get("atol", atol)}


def _prepare(folder: Path) -> None:
    """An empty or missing folder, or an earlier kit (rewritten, its reports kept); anything else is refused so that
    nothing of the user's is overwritten."""
    if folder.exists() and not folder.is_dir():
        raise KitError(f"{folder}: exists and is not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not (folder / "commands.json").is_file():
        raise KitError(f"{folder}: not empty and not a kit (no commands.json): choose an empty or new folder")
    folder.mkdir(parents=True, exist_ok=True)
    for name in WRITTEN:
        path = folder / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


def write_kit(
    folder: Path,
    project: Path,
    commands: list[dict],
    reference: dict | None,
    torch_npu: str,
    probe: Path | None = None,
) -> Path:
    """Write the kit for ``project`` into ``folder`` and return ``folder``. ``commands``: ``{"name", "argv"}`` with argv
    relative to the project root; ``reference``: what ``verify --compare`` recorded (None: no comparison);
    ``torch_npu``: the release the port targets; ``probe``: the probe folder (default ``ascend_port/verify/probe``).
    Raises KitError."""
    probe = PROBE if probe is None else probe
    if not (probe / "sitecustomize.py").is_file():
        raise KitError(f"{probe}: no probe (sitecustomize.py) to copy into the kit")
    checked = _check_commands(commands)
    ref = None if reference is None else _check_reference(reference, {c["name"] for c in checked})
    folder = Path(folder)
    _prepare(folder)
    for name in COPIED:
        shutil.copyfile(KIT_FILES / name, folder / name)
    shutil.copytree(probe, folder / "probe", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    kit = {
        "project": Path(project).resolve().name,
        "torch_npu": torch_npu,
        "emulate_torch_npu": _emulated(torch_npu),
        "ascend_port": __version__,
        "tolerances": {dtype: {"rtol": r, "atol": a} for dtype, (r, a) in TOLERANCES.items()},
        "commands": checked,
    }
    (folder / "commands.json").write_text(json.dumps(kit, indent=2) + "\n", "utf-8")
    (folder / "releases.json").write_text(json.dumps(release_table(), indent=1) + "\n", "utf-8")
    if ref is not None:
        (folder / "reference.json").write_text(json.dumps(ref, indent=2) + "\n", "utf-8")
    return folder
