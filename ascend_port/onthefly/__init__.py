"""`ascend-port run`: the project's modules ported in memory as the program imports them.

The parent ports the project as `apply` does (prepare.py) and launches the program with the bootstrap on its path
(command.py, launch.py); in the program's processes a ``sys.meta_path`` finder serves each ported module from its
ported text under its real file name and lines (bootstrap/, standard library only). ``activate()`` does the same in
the running interpreter (a notebook)."""
