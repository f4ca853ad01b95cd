"""Import modules one by one in this process and say which fail: ``python _ascend_port_imports.py OUT.json
PATH_ENTRY:MODULE ...``. Each failure is recorded with its traceback (SystemExit too), the next module is tried
anyway; the exit code is 1 when any failed. Stdlib only (the kit copies it with the probe)."""

from __future__ import annotations

import importlib
import json
import sys
import time
import traceback


def main(argv: list[str]) -> int:
    out, specs = argv[0], argv[1:]
    results = []
    for spec in specs:
        entry, _, module = spec.rpartition(":")
        if entry and entry not in sys.path:
            sys.path.insert(0, entry)
        started = time.monotonic()
        try:
            importlib.import_module(module)
            results.append({"module": module, "ok": True, "seconds": round(time.monotonic() - started, 3)})
        except BaseException as error:  # SystemExit of a module is a failure too
            if isinstance(error, KeyboardInterrupt):
                raise
            text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
            results.append({"module": module, "ok": False, "traceback": text})
            print(f"import {module}: failed\n{text}", file=sys.stderr)
        with open(out, "w", encoding="utf-8") as stream:  # after each: a timeout keeps what finished
            json.dump(results, stream)
    return 1 if any(not r["ok"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
