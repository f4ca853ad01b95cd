"""The emulated npu device's C++ lives in its own file, ascend_port/emulate/native.cpp: read as a package resource,
the same text whichever way _native.py is loaded, and shipped in the wheel (pyproject's package-data)."""

from __future__ import annotations

import importlib.resources
import importlib.util
import re
import sys
from pathlib import Path, PurePosixPath

import pytest

from ascend_port.emulate import _native

ROOT = Path(__file__).resolve().parent.parent
EMULATE_DIR = ROOT / "ascend_port" / "emulate"


def _package_text() -> str:
    return importlib.resources.files("ascend_port.emulate").joinpath("native.cpp").read_text(encoding="utf-8")


def test_source_is_the_package_file():
    assert (EMULATE_DIR / "native.cpp").is_file()
    assert _native.SOURCE == _package_text()
    assert _native.SOURCE.startswith("//")  # the file's own header comment, then the C++
    assert '"""' not in _native.SOURCE


def test_loaded_by_path_reads_the_same_file():
    """device.py (and the stand-in torch_npu) load _native.py by path, outside the ascend_port package: the build
    compiles the same text."""
    spec = importlib.util.spec_from_file_location("_ascend_port_emulate_native_source_test", EMULATE_DIR / "_native.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.SOURCE == _package_text()
    assert module.FUNCTIONS == _native.FUNCTIONS


def test_device_builds_from_the_package_file():
    pytest.importorskip("torch")
    from ascend_port.emulate import device

    assert device._source_module().SOURCE == _package_text()


def test_bound_functions_are_defined_in_the_source():
    for name in _native.FUNCTIONS:
        assert re.search(rf"^\S.*\b{name}\(", _native.SOURCE, re.MULTILINE), name


def test_wheel_package_data_ships_the_cpp():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        tomllib = pytest.importorskip("tomli")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["ascend_port"]
    package = ROOT / "ascend_port"
    sources = [PurePosixPath(p.relative_to(package).as_posix()) for p in package.rglob("*.cpp")]
    assert PurePosixPath("emulate/native.cpp") in sources
    for source in sources:
        assert any(source.match(pattern) for pattern in patterns), source
