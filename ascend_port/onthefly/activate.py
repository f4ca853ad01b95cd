"""``ascend_port.activate()``: `ascend-port run` inside the running interpreter (a notebook, a REPL): the project is
ported as `apply` ports it and its modules imported from now on are served ported; the processes the interpreter
starts (DataLoader and spawn workers) get the finder through the bootstrap's sitecustomize."""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

from ascend_port.emulate.runner import python_path_with
from ascend_port.onthefly.command import BOOTSTRAP
from ascend_port.onthefly.launch import MANIFEST_ENV, REPORT_ENV
from ascend_port.onthefly.prepare import Prepared, prepare
from ascend_port.run import config as project_config
from ascend_port.run.engine import run

_active: Prepared | None = None


def activate(project: str | os.PathLike[str] = ".", torch_npu: str | None = None) -> Prepared:
    """Port ``project`` (default: the working directory) in memory and serve its modules ported to every import
    from now on. A module imported before stays as it was imported (a warning names them): restart the kernel and
    call this first. Calling it again returns the first activation."""
    global _active
    if _active is not None:
        return _active
    root = Path(project)
    settings = project_config.resolve([root], project_config.Flags(torch_npu=torch_npu).keys())
    result = run([root], settings.run_config())
    scratch = Path(tempfile.mkdtemp(prefix="ascend-port-run-"))
    atexit.register(shutil.rmtree, scratch, True)
    prepared = prepare(result, scratch)
    early = sorted(
        name
        for name, module in list(sys.modules.items())
        if os.path.realpath(getattr(module, "__file__", None) or "") in prepared.modules
    )
    if early:
        warnings.warn(
            f"imported before ascend_port.activate(), so not ported: {', '.join(early)} (restart and activate first)",
            stacklevel=2,
        )
    os.environ[MANIFEST_ENV] = str(prepared.manifest)
    os.environ.pop(REPORT_ENV, None)
    os.environ["PYTHONPATH"] = python_path_with(BOOTSTRAP, os.environ)
    _import_side().install()
    _active = prepared
    return prepared


def _import_side():
    """The bootstrap's finder module, as the program's processes import it (one copy per interpreter)."""
    name = "_ascend_port_onthefly"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, BOOTSTRAP / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
