"""C++ and CUDA sources read without a compiler: comments, literals and directives blanked (offsets and lines
kept), the ``__global__`` kernels a file defines, and the ops it binds for Python (pybind11, TORCH_LIBRARY). Knows no
rule: rules/cuda_sources.py reports the kernels and reads the bindings of a project, the reports list them."""

from __future__ import annotations

import re

# Comments, string literals (including raw strings R"x(...)x") and char literals, in one left-to-right pass.
_LEXEMES = re.compile(
    r"""//[^\n]*|/\*.*?\*/|R"(?P<delim>[^()\\\s]{0,16})\(.*?\)(?P=delim)"|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""",
    re.DOTALL,
)
_PREPROCESSOR = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.MULTILINE)
_GLOBAL = re.compile(r"\b__global__\b")
_IDENT = re.compile(r"[A-Za-z_]\w*")
# Words that can stand between __global__ and the kernel's name without being the name.
_NOT_A_NAME = {
    "void",
    "static",
    "inline",
    "extern",
    "__inline__",
    "__forceinline__",
    "__noinline__",
    "template",
    "typename",
    "const",
    "__launch_bounds__",
    "__attribute__",
    "__declspec",
    "__device__",
    "__host__",
    "__cluster_dims__",
    "__maxnreg__",
}


def _blank(match: re.Match[str]) -> str:
    """The same number of characters and newlines, with nothing in them that can look like code."""
    return re.sub(r"[^\n]", " ", match.group(0))


def strip_code(text: str) -> str:
    """``text`` with comments, literals and preprocessor directives blanked; offsets and lines are kept."""
    return _PREPROCESSOR.sub(_blank, _LEXEMES.sub(_blank, text))


def _skip_group(code: str, i: int, opening: str = "(", closing: str = ")") -> int:
    """Index just after the balanced group that starts at ``code[i] == opening`` (the end of ``code`` if it is not
    closed)."""
    depth = 0
    for j in range(i, len(code)):
        if code[j] == opening:
            depth += 1
        elif code[j] == closing:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(code)


def global_kernels(text: str) -> list[tuple[str, int]]:
    """(name, 1-based line) of every ``__global__`` function definition in CUDA source ``text``."""
    code = strip_code(text)
    kernels: list[tuple[str, int]] = []
    for match in _GLOBAL.finditer(code):
        i = match.end()
        name = None
        while i < len(code):
            ch = code[i]
            if ch.isspace() or ch in "*&:<>,":
                i += 1
                continue
            ident = _IDENT.match(code, i)
            if ident is not None:
                word = ident.group(0)
                i = ident.end()
                if word in ("__launch_bounds__", "__attribute__", "__declspec", "__cluster_dims__", "__maxnreg__"):
                    rest = code[i:].lstrip()
                    if rest.startswith("("):
                        i = _skip_group(code, len(code) - len(rest))
                    continue
                if word not in _NOT_A_NAME:
                    name = word
                continue
            if ch == "(" and name is not None:
                end = _skip_group(code, i)
                tail = code[end:].lstrip()
                if tail.startswith("{"):  # a definition, not a declaration
                    kernels.append((name, code.count("\n", 0, match.start()) + 1))
            break
    return kernels


# --- the ops a C++/CUDA source binds for Python (NPU502's call sites in other files) ---------------------------------

# `PYBIND11_MODULE(name, m)`, `TORCH_LIBRARY(ns, m)`, `TORCH_LIBRARY_FRAGMENT(ns, m)`, `TORCH_LIBRARY_IMPL(ns, KEY, m)`
_BINDING = re.compile(r"\b(PYBIND11_MODULE|TORCH_LIBRARY(?:_FRAGMENT|_IMPL)?)\s*\(")
# The module name a setup.py gives the extension in place of the macro's argument.
EXTENSION_NAME_MACRO = "TORCH_EXTENSION_NAME"


def bindings(text: str) -> list[tuple[str, str]]:
    """(where, op) for every op bound in C++ source ``text``: ``where`` is the pybind11 module's name
    (``TORCH_EXTENSION_NAME`` when setup.py names it) or ``torch.ops.<ns>`` for a ``TORCH_LIBRARY`` namespace. A
    ``TORCH_LIBRARY_IMPL`` block counts for CUDA keys only (a CPU kernel is not what the NPU lacks)."""
    code = strip_code(text)  # (literals blanked: braces and parentheses in strings and comments do not count)
    found: list[tuple[str, str]] = []
    for match in _BINDING.finditer(code):
        close = _skip_group(code, match.end() - 1)
        args = [a.strip() for a in code[match.end() : close - 1].split(",")]
        body_start = code.find("{", close)
        if len(args) < 2 or body_start < 0 or code[close:body_start].strip():
            continue  # a declaration or another use of the macro's name
        if match.group(1) == "TORCH_LIBRARY_IMPL" and (len(args) < 3 or "CUDA" not in args[1]):
            continue
        where = args[0] if match.group(1) == "PYBIND11_MODULE" else f"torch.ops.{args[0]}"
        body_end = _skip_group(code, body_start, "{", "}")
        calls = re.compile(rf'\b{re.escape(args[-1])}\s*\.\s*(?:def|impl)\s*\(\s*"(?:\w+::)?([A-Za-z_]\w*)')
        # (matched in the text, where the op's string is; a call inside a comment is blank in ``code``)
        found += [(where, op.group(1)) for op in calls.finditer(text, body_start, body_end) if code[op.start()] != " "]
    return found
