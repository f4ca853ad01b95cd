"""ascend-port verify's probe: first on PYTHONPATH, it starts in every Python process of a command. It does nothing
unless ASCEND_PORT_PROBE_OUT is set, then loads _ascend_port_probe (stdlib + torch only: the kit copies this folder
to an Ascend host). Any other sitecustomize on sys.path (a virtualenv's, a distribution's) is loaded after it."""

import importlib.util
import os
import sys

if os.environ.get("ASCEND_PORT_PROBE_OUT"):
    try:
        import _ascend_port_probe  # type: ignore[import-not-found,unused-ignore]

        _ascend_port_probe.start()
    except Exception as _error:  # the probe must never stop the program it watches
        print(f"ascend-port probe: not started: {_error!r}", file=sys.stderr)


def _chain_load() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        folder = os.path.abspath(entry or os.getcwd())
        if folder == here:
            continue
        path = os.path.join(folder, "sitecustomize.py")
        if os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("_ascend_port_chained_sitecustomize", path)
            if spec is not None and spec.loader is not None:
                module = importlib.util.module_from_spec(spec)
                sys.modules["_ascend_port_chained_sitecustomize"] = module
                spec.loader.exec_module(module)
            return


_chain_load()
