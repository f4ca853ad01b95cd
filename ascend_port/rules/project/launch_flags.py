"""The project step of NPU624's launch flags (rules/project/switches.py): which of the project's own command-line
flags that call a CUDA-only library (`--xformers`, `--fp8`) a launch script may drop, read in the project's Python
code with ``ast`` (never imported). Light (no LibCST): rules/registry.py imports it on runs the cache answers.

A flag qualifies where every definition of it is `action="store_true"` (off unless given, no `default=True`) and
every `if` that tests it has a way on when it is off that does not stop the program: no `else`, or an `if`/`elif`
chain whose rest ends without a `raise` (`sys.exit`, `parser.error`). A chain that stops where no flag of it is given
(musubi-tuner's `if args.sdpa: ... elif args.xformers: ... else: raise ValueError(...)`) but offers a plain-torch
flag (`--sdpa`) gets that flag instead. `assert args.fp8`, a `while` on it, a test the rule cannot read
(`args.xformers == True`) or a flag defined twice in two ways leave it in the script.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from ascend_port.core.options import LaunchFlags, PortOptions
from ascend_port.core.porting import Project, ProjectStep

# The flags, by their name without dashes and with `_` for `-`, and the library each calls on a CUDA host.
CUDA_FLAGS = {
    "xformers": "xformers",
    "use_xformers": "xformers",
    "fp8": "fp8",
    "use_fp8": "fp8",
}
# Flags whose path is plain PyTorch (scaled_dot_product_attention): what a chain that needs one of its flags gets.
PLAIN_FLAGS = frozenset({"sdpa", "use_sdpa"})
# A file worth parsing: it defines one of the flags (a quoted option string) with argparse.
_DEFINES = re.compile(rb"""["']--(?:use[_-])?(?:xformers|fp8)["']""")
_STOPS = frozenset({"sys.exit", "exit", "quit", "os._exit"})


@dataclass
class _Flag:
    """What the project's code says of one flag (by its dest, `xformers`)."""

    options: set[str]  # its option strings (`--xformers`, `--use-xformers`)
    store_true: bool = True  # every definition is store_true, off by default
    safe: bool = True  # every test of it has a way on when off
    needs: set[str] | None = None  # the plain flags (dests) some chain needs instead (None: none needed)
    where: str = ""  # the first file that defines it, for the note


class LaunchFlagSwitches(ProjectStep):
    """The launch flags a script may drop or replace (PortOptions.launch_flags; what the caller set wins)."""

    def facts(self, project: Project, options: PortOptions) -> PortOptions:
        if options.launch_flags:
            return options
        found = launch_flags(_texts(path for path in project.files if path.suffix == ".py"))
        return replace(options, launch_flags=found) if found else options


def launch_flags(texts: Iterable[tuple[Path, bytes]]) -> LaunchFlags:
    """(option string, the plain option that replaces it or "", what it calls, the file that defines it), sorted."""
    read = list(texts)
    flags: dict[str, _Flag] = {}
    plain: dict[str, str] = {}  # dest -> option string of the plain flags, where store_true
    for path, text in read:
        if b"add_argument" in text and _DEFINES.search(text) and (tree := _parse(text)) is not None:
            _definitions(tree, path, flags, plain)
    if not flags:
        return ()
    dests = [dest.encode() for dest in flags]
    for _, text in read:  # the tests of a flag may be in another module than its parser (a shared `args`)
        if any(b"." + dest in text or b"'" + dest in text or b'"' + dest in text for dest in dests):
            if (tree := _parse(text)) is not None:
                _tests(tree, flags)
    result: list[tuple[str, str, str, str]] = []
    for flag in flags.values():
        if not (flag.store_true and flag.safe):
            continue
        instead = ""
        if flag.needs is not None:
            usable = [plain[name] for name in sorted(flag.needs) if name in plain]
            if len(flag.needs) != 1 or not usable:
                continue
            instead = usable[0]
        for option in sorted(flag.options):
            result.append((option, instead, CUDA_FLAGS[_name(option)], flag.where))
    return tuple(sorted(result))


def _parse(text: bytes) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _name(option: str) -> str:
    return option.lstrip("-").replace("-", "_")


def _definitions(tree: ast.Module, path: Path, flags: dict[str, _Flag], plain: dict[str, str]) -> None:
    """Record each `add_argument` of a flag of ``CUDA_FLAGS`` (and of the plain ones) in ``flags``/``plain``."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "add_argument":
            continue
        options = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        longs = [o for o in options if o.startswith("--")]
        if not longs:
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        dest_node = keywords.get("dest")
        dest = dest_node.value if isinstance(dest_node, ast.Constant) else _name(longs[0])
        action, default = keywords.get("action"), keywords.get("default")
        store_true = (
            isinstance(action, ast.Constant)
            and action.value == "store_true"
            and (default is None or (isinstance(default, ast.Constant) and not default.value))
            and isinstance(dest, str)
        )
        if any(_name(o) in PLAIN_FLAGS for o in longs) and store_true and isinstance(dest, str):
            plain.setdefault(dest, longs[0])
        ours = {o for o in longs if _name(o) in CUDA_FLAGS}
        if not ours:
            continue
        if not isinstance(dest, str):  # (an odd dest: nothing is known of its tests)
            dest = _name(longs[0])
            store_true = False
        flag = flags.setdefault(dest, _Flag(set(), where=path.name))
        flag.options |= ours
        flag.store_true &= store_true


def _tests(tree: ast.Module, flags: dict[str, _Flag]) -> None:
    """Mark each flag of ``flags`` that a test of this module may stop the program without (``safe``), and the
    plain flags its `if` chains need instead (``needs``)."""
    elifs = {
        id(node.orelse[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and id(node) not in elifs:
            _chain(_links(node), flags)
        elif isinstance(node, (ast.Assert, ast.While)):
            for dest in _read(node.test, flags):
                flags[dest].safe = False


def _links(node: ast.If) -> list[ast.If]:
    """The `if` and its `elif`s."""
    links = [node]
    while len(links[-1].orelse) == 1 and isinstance(links[-1].orelse[0], ast.If):
        links.append(links[-1].orelse[0])
    return links


def _chain(links: list[ast.If], flags: dict[str, _Flag]) -> None:
    """One `if`/`elif` chain: for each flag tested in it, is there a way on with the flag off?"""
    stops_at_end = _stops(links[-1].orelse)  # where no test of the chain holds
    for k, link in enumerate(links):
        for dest in _read(link.test, flags):
            flag = flags[dest]
            test = link.test
            if _is_read(test, dest):  # `if args.xformers:`: off, the rest of the chain runs
                if not (stops_at_end or any(_stops(rest.body) for rest in links[k + 1 :])):
                    continue
                offered = {name for other in links if (name := _plain_read(other.test))}
                if offered:  # (`--sdpa` given, its branch runs: the first the chain offers, or the only one)
                    flag.needs = (flag.needs or set()) | offered
                else:
                    flag.safe = False
            elif (
                isinstance(test, ast.BoolOp)
                and isinstance(test.op, ast.And)
                and any(_is_read(value, dest) for value in test.values)
            ):
                if stops_at_end or any(_stops(rest.body) for rest in links[k + 1 :]):  # (as above, no alternative)
                    flag.safe = False
            elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _is_read(test.operand, dest):
                if _stops(link.body):  # `if not args.fp8: raise ...`: off, it stops
                    flag.safe = False
            else:
                flag.safe = False  # a test the rule does not read


def _read(test: ast.expr, flags: dict[str, _Flag]) -> set[str]:
    """The flags of ``flags`` that ``test`` reads (`x.dest`, `getattr(x, "dest", ...)`)."""
    found: set[str] = set()
    for node in ast.walk(test):
        if isinstance(node, ast.Attribute) and node.attr in flags:
            found.add(node.attr)
        elif _getattr_name(node) in flags:
            found.add(str(_getattr_name(node)))
    return found


def _is_read(node: ast.expr, dest: str) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == dest) or _getattr_name(node) == dest


def _plain_read(test: ast.expr) -> str | None:
    """The plain flag a test reads alone (`elif args.sdpa:`), or None."""
    if isinstance(test, ast.Attribute) and test.attr in PLAIN_FLAGS:
        return test.attr
    name = _getattr_name(test)
    return name if name in PLAIN_FLAGS else None


def _getattr_name(node: ast.AST) -> str | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return node.args[1].value
    return None


def _stops(body: list[ast.stmt]) -> bool:
    """Does the block raise or exit anywhere (its nested blocks included, its functions not)?"""
    return any(_stop(node) for node in _walk_block(body))


def _walk_block(body: list[ast.stmt]) -> Iterator[ast.AST]:
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield node
        todo.extend(ast.iter_child_nodes(node))


def _stop(node: ast.AST) -> bool:
    if isinstance(node, ast.Raise):
        return True
    if isinstance(node, ast.Assert):
        return isinstance(node.test, ast.Constant) and not node.test.value
    if not isinstance(node, ast.Call):
        return False
    called = ast.unparse(node.func)
    return called in _STOPS or (called.endswith(".error") and "parser" in called)


def _texts(paths: Iterable[Path]) -> Iterator[tuple[Path, bytes]]:
    for path in paths:
        try:
            yield path, path.read_bytes()
        except OSError:
            continue


PROJECT_STEPS = (LaunchFlagSwitches(),)
