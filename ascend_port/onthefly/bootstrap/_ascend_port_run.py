"""The main script of a program under `ascend-port run`: ``python _ascend_port_run.py SCRIPT ARGS...`` or
``python _ascend_port_run.py -m MODULE ARGS...`` runs the script or module as ``python SCRIPT``/``python -m`` would,
from its ported text (a main script is not imported, so the finder alone would never see it).

As ``python`` does: ``sys.argv`` is the script and its arguments, ``sys.path[0]`` the script's folder (the working
directory for ``-m``), ``__main__`` a fresh module; an uncaught exception prints its traceback without this file's
frames and exits with 1."""

import os
import sys
import traceback


def _main():
    here = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
    if sys.path and os.path.realpath(sys.path[0] or ".") == here:
        del sys.path[0]  # this file's folder, where python puts the script's (it stays on PYTHONPATH for subprocesses)
    try:  # beside this file: imported by the sitecustomize there already, unless python ran without site or PYTHONPATH
        import _ascend_port_onthefly as onthefly  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        sys.path.append(here)
        import _ascend_port_onthefly as onthefly  # type: ignore[import-not-found,unused-ignore]

        sys.path.remove(here)
    onthefly.install()
    args = sys.argv[1:]
    if not args:
        sys.stderr.write("usage: _ascend_port_run.py (SCRIPT | -m MODULE) [ARGS...]\n")
        return 2
    if args[0] == "-m":
        import runpy

        sys.path.insert(0, os.getcwd())
        sys.argv = [args[1], *args[2:]]  # (runpy replaces argv[0] with the module's file)
        runpy._run_module_as_main(args[1], alter_argv=True)
        return 0
    script = args[0]
    sys.argv = list(args)
    sys.path.insert(0, os.path.dirname(os.path.realpath(script)))
    import types

    main = types.ModuleType("__main__")
    main.__file__ = os.path.abspath(script)
    main.__builtins__ = __builtins__
    main.__cached__ = None
    sys.modules["__main__"] = main
    code = onthefly.ported_code(script, main.__file__)
    if code is None:
        with open(script, "rb") as stream:
            code = compile(stream.read(), main.__file__, "exec", dont_inherit=True)
    exec(code, main.__dict__)
    return 0


if __name__ == "__main__":
    try:
        status = _main()
    except SystemExit:
        raise
    except BaseException as error:  # as python prints it: without this file's frames
        tb = error.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == os.path.abspath(__file__):
            tb = tb.tb_next
        traceback.print_exception(type(error), error, tb)
        status = 130 if isinstance(error, KeyboardInterrupt) else 1
    sys.exit(status)
