"""`ascend-port run` in every Python process of the program (torchrun's workers, multiprocessing's spawned workers,
subprocesses): installs the ported-module finder when ``$ASCEND_PORT_RUN_MANIFEST`` names a manifest, then runs the
``sitecustomize`` this one shadows (a distribution's or a virtual environment's), as if this one were not there."""

import os
import sys


def _install():
    here = os.path.dirname(os.path.abspath(__file__))
    if os.environ.get("ASCEND_PORT_RUN_MANIFEST"):
        try:
            import _ascend_port_onthefly  # type: ignore[import-not-found,unused-ignore]

            _ascend_port_onthefly.install()
        except Exception as error:  # (site would swallow it into "Error in sitecustomize")
            sys.stderr.write(f"ascend-port run: the port could not be installed in this process: {error}\n")
    # The next sitecustomize on the path: the one Python would have run without this folder on PYTHONPATH.
    # What is in sys.modules under the name when this file ends is what `import sitecustomize` gives (importlib
    # reads it back): the next one when there is one, else this one.
    this = sys.modules.pop("sitecustomize")
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != os.path.realpath(here)]
    try:
        import sitecustomize  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        sys.modules["sitecustomize"] = this
    finally:
        sys.path[:] = saved


_install()
