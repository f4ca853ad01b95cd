"""NPU6xx: the project around the Python code. Dependencies (requirements, constraints, pyproject.toml, setup.py,
setup.cfg), launch scripts (shell, Makefile, Dockerfile, notebook ``!`` lines) and configs (YAML, JSON).

These rules have their own IDs even where a Python rule does the same thing in ``.py`` files (NPU610 is the
shell twin of NPU111, NPU615 of NPU103): ``--select NPU6`` then ports exactly the files around the code, and a rule's
golden cases stay in one file type.
"""
