"""The import side of `ascend-port run`, inside the program's processes: a ``sys.meta_path`` finder that serves the
project's modules as the port wrote them, from the manifest the parent process prepared (onthefly/prepare.py).

Standard library only, and importable by any Python the program runs with: it never imports ascend-port, LibCST or
torch. The files stay as they are: a module's ``__file__`` is its real path, its code is compiled from the ported
text with each line numbered as the line of the real file it came from, so tracebacks, ``inspect`` and debuggers show
the user's files and lines. No bytecode is written (the loader has no ``path_stats``): a ``.pyc`` of ported code
beside the user's file would be loaded later by a plain ``python``.

Manifest (JSON): ``{"modules": {real path: {"source": file of the ported text, "lines": [the real line of each
ported line], "changed": [ported lines whose text differs], "created": bool}}}``. Each process that served modules
writes ``{"pid", "argv", "served": [real paths]}`` into ``$ASCEND_PORT_RUN_REPORT`` at exit.
"""

from __future__ import annotations

import ast
import atexit
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys

MANIFEST_ENV = "ASCEND_PORT_RUN_MANIFEST"
REPORT_ENV = "ASCEND_PORT_RUN_REPORT"


def _real(path):
    return os.path.realpath(os.path.abspath(path))


class PortedModule:
    """One module of the manifest: the ported text and how its lines map to the real file's."""

    def __init__(self, path, entry):
        self.path = path
        self.source_file = entry["source"]
        self.lines = entry["lines"]
        self.changed = frozenset(entry.get("changed", ()))
        self.created = bool(entry.get("created"))

    def text(self):
        # Written as UTF-8 text by the parent; parsed as text, so a coding cookie of the original is not re-applied.
        with open(self.source_file, encoding="utf-8") as stream:
            return stream.read()

    def code(self, filename):
        """The ported text compiled with the real file's line numbers. On a line the port changed, the columns
        would point into the ported text: such a node spans its real lines whole, so a traceback names the line
        without a caret under the wrong characters."""
        tree = ast.parse(self.text(), filename)
        real = self._real_lines()
        last = len(self.lines)
        for node in ast.walk(tree):
            lineno = getattr(node, "lineno", None)
            if lineno is None or "lineno" not in node._attributes:
                continue
            end = getattr(node, "end_lineno", None) or lineno
            node.lineno = self.lines[min(lineno, last) - 1] if last else lineno
            node.end_lineno = max(node.lineno, self.lines[min(end, last) - 1] if last else end)
            if lineno in self.changed or end in self.changed:
                first = real[node.lineno - 1] if node.lineno <= len(real) else b""
                final = real[node.end_lineno - 1] if node.end_lineno <= len(real) else b""
                node.col_offset = len(first) - len(first.lstrip())
                node.end_col_offset = len(final.rstrip())
        return compile(tree, filename, "exec", dont_inherit=True)

    def _real_lines(self):
        """The real file's lines as bytes (columns count bytes), or [] for a module the port creates."""
        if self.created:
            return []
        try:
            with open(self.path, "rb") as stream:
                return stream.read().splitlines()
        except OSError:
            return []


class PortedLoader(importlib.machinery.SourceFileLoader):
    """Executes a module from its ported text. Otherwise the file's own loader: ``__file__`` is the real path, and
    the package's data files and importlib.resources are read beside it. Its ``get_code`` never reads or writes
    bytecode."""

    def __init__(self, fullname, module):
        super().__init__(fullname, module.path)
        self.module = module

    # What exec_module, runpy (-m), inspect, linecache and pdb ask a loader for.
    def get_code(self, fullname):
        served.add(self.module.path)
        return self.module.code(self.module.path)

    def get_source(self, fullname):
        return self.module.text()


class PortedFinder(importlib.abc.MetaPathFinder):
    """Finds modules as Python's own path finder does (the same order, the same rules), then serves a module of the
    manifest from its ported text. A module the port creates (a shared helper) has no file: it is found in the
    folders Python would search for it."""

    def __init__(self, modules):
        self.modules = modules

    def find_spec(self, fullname, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None:
            if spec.origin and spec.has_location:
                module = self.modules.get(_real(spec.origin))
                if module is not None and not module.created:
                    spec.loader = PortedLoader(fullname, module)
            return spec
        return self._created(fullname, path)

    def _created(self, fullname, path):
        name = fullname.rpartition(".")[2]
        for folder in sys.path if path is None else path:
            for candidate, package in (
                (os.path.join(folder or ".", name + ".py"), False),
                (os.path.join(folder or ".", name, "__init__.py"), True),
            ):
                module = self.modules.get(_real(candidate))
                if module is not None and module.created:
                    return importlib.util.spec_from_file_location(
                        fullname,
                        module.path,
                        loader=PortedLoader(fullname, module),
                        submodule_search_locations=[os.path.dirname(module.path)] if package else None,
                    )
        return None

    def ported(self, path):
        """The ported module of the file at ``path``, or None when the port leaves it unchanged."""
        return self.modules.get(_real(path))


served: set[str] = set()  # real paths of the ported modules this process ran
_finder = None


def install():
    """Install the finder from ``$ASCEND_PORT_RUN_MANIFEST`` (once per process); the finder, or None when there is
    no manifest."""
    global _finder
    if _finder is not None:
        return _finder
    manifest = os.environ.get(MANIFEST_ENV)
    if not manifest:
        return None
    with open(manifest, encoding="utf-8") as stream:
        data = json.load(stream)
    _finder = PortedFinder({path: PortedModule(path, entry) for path, entry in data["modules"].items()})
    sys.meta_path.insert(0, _finder)
    atexit.register(_write_report)
    _port_spawned_mains()
    return _finder


def _write_report():
    folder = os.environ.get(REPORT_ENV)
    if not folder or not served:
        return
    try:
        with open(os.path.join(folder, f"{os.getpid()}.json"), "w", encoding="utf-8") as stream:
            json.dump({"pid": os.getpid(), "argv": sys.argv, "served": sorted(served)}, stream)
    except OSError:
        pass


def ported_code(path, filename):
    """The code of the script at ``path`` compiled from its port (as ``filename``), or None when the port leaves it
    unchanged."""
    module = _finder.ported(path) if _finder is not None else None
    if module is None:
        return None
    served.add(module.path)
    return module.code(filename)


def run_path_ported(path, run_name):
    """``runpy.run_path`` for a script: its ported text when the port changed it. Returns the globals."""
    code = ported_code(path, path)
    if code is None:
        import runpy

        return runpy.run_path(path, run_name=run_name)
    namespace = {
        "__name__": run_name,
        "__file__": path,
        "__cached__": None,
        "__doc__": None,
        "__loader__": None,
        "__package__": None,
        "__spec__": None,
        "__builtins__": __builtins__,
    }
    exec(code, namespace)  # (the port of the user's script)
    return namespace


class _SpawnRunpy:
    """What ``multiprocessing.spawn`` sees as ``runpy``: a spawned worker (DataLoader workers, mp.spawn) re-runs the
    main script by path, which must be the ported script, as in its parent."""

    def __getattr__(self, name):
        import runpy

        return getattr(runpy, name)

    @staticmethod
    def run_path(path, init_globals=None, run_name=None):
        if init_globals:
            import runpy

            return runpy.run_path(path, init_globals, run_name)
        return run_path_ported(path, run_name or "<run_path>")


def _port_spawned_mains():
    # Only a process started by multiprocessing's spawn (`python -c "from multiprocessing.spawn import ...)"
    # --multiprocessing-fork`) needs it, and the process that runs the main script (which may spawn); importing
    # multiprocessing in every other process would cost each a few milliseconds for nothing.
    if "--multiprocessing-fork" in sys.argv or "multiprocessing.spawn" in sys.modules:
        import multiprocessing.spawn

        multiprocessing.spawn.runpy = _SpawnRunpy()
