"""`ascend-port scaffold OP`: an Ascend C operator project for one op of a CUDA extension that NPU502 reports.

``ops.py`` finds the ops (the bindings of the project's C++ and their Python call sites), ``signature.py`` reads an
op's C++ function (arguments, result, shape checks), ``fallback.py`` finds the project's own pure-torch version of it
beside the call sites, ``plan.py`` names the scaffold, ``ascend_c.py`` and ``python_side.py`` compute its C++ and
Python parts, ``generate.py`` writes them through the templates in ``templates/``."""
