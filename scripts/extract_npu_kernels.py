"""Extract, per covered torch-npu release, the aten operators it has an NPU kernel for, into
ascend_port/data/torch_npu_kernels.json (read by the emulator's hazard report: an op without one falls back to the
CPU on that release).

Source: ``torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml`` inside each wheel, the list torch_npu's code
generator registers for the PrivateUse1 key (its ``supported``, ``symint``, ``quant`` and ``autograd`` entries; the
``custom`` entries are torch_npu's own ``npu::`` ops, not aten). Every wheel from 2.1.0 to 2.14.0 ships it. An entry
is ``name.overload`` or ``name.overload(schema) -> ret``; only the overload name is kept.

The wheels are the ones ascend_port/data/torch_npu_releases.json lists (file name and sha256, checked here), read as
zips and never installed; ``--wheels DIR`` reuses (and keeps) downloaded ones, else they are downloaded with
``pip download --no-deps`` into a temporary folder. A release whose wheel cannot be downloaded is left out and named.

The output is small: the first release's full sorted list, then for each later release the names added and removed
against the one before.

Usage:
    python scripts/extract_npu_kernels.py [--wheels /tmp/npu_wheels]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
RELEASES = ROOT / "ascend_port" / "data" / "torch_npu_releases.json"
OUTPUT = ROOT / "ascend_port" / "data" / "torch_npu_kernels.json"
YAML_PATH = "torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml"
# The yaml sections that give an aten op a kernel on the npu (directly or at its autograd key).
ATEN_SECTIONS = ("supported", "symint", "quant", "autograd")


def op_name(entry: str | dict) -> str:
    """``add.Tensor(Tensor self, ...) -> Tensor`` or ``{'func': ...}`` -> ``add.Tensor``."""
    text = entry if isinstance(entry, str) else str(entry["func"])
    return text.split("(", 1)[0].strip()


def aten_kernels(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        data = yaml.safe_load(archive.read(YAML_PATH))
    return sorted({op_name(entry) for section in ATEN_SECTIONS for entry in data.get(section) or []})


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(release: dict, folder: Path) -> Path | None:
    """The release's wheel in ``folder`` (downloaded when absent), None when pip cannot get it."""
    target = folder / release["wheel"]
    if not target.exists():
        python = release["wheel"].split("-")[2].removeprefix("cp")
        platform = release["wheel"].removesuffix(".whl").split("-")[4].split(".")[0]
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet"]
            + ["--python-version", f"{python[0]}.{python[1:]}", "--platform", platform]
            + [f"torch-npu=={release['version']}", "-d", str(folder)],
            check=False,
        )
        if done.returncode != 0 or not target.exists():
            return None
    if sha256_of(target) != release["sha256"]:
        sys.exit(f"{target.name}: sha256 differs from torch_npu_releases.json's")
    return target


def encode(lists: list[tuple[dict, list[str]]]) -> list[dict]:
    """Base + diff: the first release's names in ``added``, each later one's changes against the one before."""
    out: list[dict] = []
    previous: set[str] = set()
    for release, names in lists:
        current = set(names)
        out.append(
            {
                "version": release["version"],
                "wheel": release["wheel"],
                "sha256": release["sha256"],
                "added": sorted(current - previous),
                "removed": sorted(previous - current),
            }
        )
        previous = current
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=Path, help="folder of downloaded wheels (reused and kept)")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    releases = json.loads(RELEASES.read_text("utf-8"))["releases"]
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.wheels or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        lists, missing = [], []
        for release in releases:
            wheel = fetch(release, folder)
            if wheel is None:
                missing.append(release["version"])
                continue
            lists.append((release, aten_kernels(wheel)))
    data = {
        "schema": 1,
        "source": f"{YAML_PATH} of each torch-npu wheel, read by scripts/extract_npu_kernels.py",
        "not_downloaded": missing,
        "releases": encode(lists),
    }
    args.output.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n", "utf-8")
    for version in missing:
        print(f"warning: torch-npu {version}: wheel not downloaded, left out", file=sys.stderr)
    print(f"{args.output}: {len(lists)} releases, {args.output.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
