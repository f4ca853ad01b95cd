"""The package's layers: imports flow one way, and no module or package imports itself back.

Every import counts, including imports made inside functions (the lazy imports of the command line) and module
names passed to ``importlib.import_module``: a cycle that closes only at run time is still a cycle.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ascend_port"

# Lowest first. A module may import its own layer and the layers below it. Above the base, the packages that share
# a rank are independent of each other (the Python machinery knows nothing of the other file formats, and back).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("", "core", "data"),  # ascend_port/__init__.py (the version), the catalogue's types, findings, sources
    ("python", "formats"),  # LibCST machinery (trigger search, scopes, chunks, splicing); other file formats
    ("rules",),  # every rule, declared and implemented in one module
    ("port",),  # the port of one file per file type: the rules composed
    # a run over a tree; the NPU emulator (a CPU-backed npu device, the torch_npu stand-in); `doctor`: the checks of
    # an Ascend host (they read the torch_npu tables of core/ and data/, nothing of the port)
    # `scaffold`: an Ascend C operator project for a CUDA extension's op (it reads the ops NPU502 knows)
    ("run", "emulate", "doctor", "scaffold"),
    # the reports of a run; `verify`: the ported project's commands run under the emulator; `run`'s port on the fly
    ("reports", "verify", "onthefly"),
    ("git",),  # the branch transaction, the review
    ("cli",),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``name`` imports (a ``from package import module`` names the module)."""
    tree = ast.parse(path.read_text("utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in known:
            targets = [node.value]  # importlib.import_module("ascend_port.…")
        else:
            continue
        for target in targets:
            # `import a.b.c` loads a and a.b too; only the named module is a dependency worth checking
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target.startswith("ascend_port") and target != name:
                found.add(target)
    return found


# The package's front door: ``ascend_port.activate()`` (`ascend-port run` in a notebook) loads the machinery above
# it when called, as the console script loads the CLI. It is an entry point, not a dependency of the layers.
ENTRY_POINTS = {"ascend_port": {"ascend_port.onthefly.activate"}}


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports(name, path, known) - ENTRY_POINTS.get(name, set()) for name, path in found.items()}


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: the components with more than one node (the cycles)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return cycles


def test_every_package_is_in_a_layer() -> None:
    assert {layer(m) for m in modules()} <= set(RANK), "a new package needs its place in LAYERS"


def test_imports_flow_down_the_layers() -> None:
    wrong = []
    for module, targets in graph().items():
        for target in targets:
            mine, theirs = layer(module), layer(target)
            if RANK[theirs] > RANK[mine] or (RANK[theirs] == RANK[mine] > 0 and theirs != mine):
                wrong.append(f"{module} ({mine or 'ascend_port'}) imports {target} ({theirs})")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_module_import_cycle() -> None:
    assert strongly_connected(graph()) == []


def test_no_package_import_cycle() -> None:
    packages: dict[str, set[str]] = defaultdict(set)
    found = modules()
    for module, targets in graph().items():
        mine = module if found[module].name == "__init__.py" else module.rpartition(".")[0]
        for target in targets:
            theirs = target if found[target].name == "__init__.py" else target.rpartition(".")[0]
            if theirs != mine and not mine.startswith(theirs + "."):  # a package's modules use their parents'
                packages[mine].add(theirs)
    assert strongly_connected(packages) == []


def test_the_checks_see_what_they_must() -> None:
    """The graph holds a lazy import inside a function, an importlib name and a relative-free absolute import."""
    edges = graph()
    assert "ascend_port.git.workflow" in edges["ascend_port.cli.apply"]  # imported inside apply()
    assert "ascend_port.rules.project.shell" in edges["ascend_port.port.filetypes"]  # importlib.import_module
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_transformers_run_in_an_order_their_declarations_allow() -> None:
    """Each transformer leaves every node after those its RUNS_AFTER names (ALL_OTHERS: after every transformer
    that does not say so itself), and the names name transformers that run."""
    from ascend_port.port.transformers import TRANSFORMERS
    from ascend_port.python.transformer import ALL_OTHERS

    position = {cls.__name__: i for i, cls in enumerate(TRANSFORMERS)}
    for cls in TRANSFORMERS:
        for name in cls.RUNS_AFTER:
            if name == ALL_OTHERS:
                others = [o.__name__ for o in TRANSFORMERS if ALL_OTHERS not in o.RUNS_AFTER]
                assert all(position[o] < position[cls.__name__] for o in others), cls.__name__
            else:
                assert name in position, f"{cls.__name__}.RUNS_AFTER names {name}, which does not run"
                assert position[name] < position[cls.__name__], f"{cls.__name__} must run after {name}"
    assert any(cls.RUNS_AFTER for cls in TRANSFORMERS)  # (the check above has something to check)


def test_project_steps_are_declared_by_rule_modules_and_all_listed() -> None:
    """The engine runs the project steps the rule modules declare (rules/registry.STEP_MODULES): every module that
    declares PROJECT_STEPS is listed."""
    import importlib
    import pkgutil

    import ascend_port.rules
    from ascend_port.rules.registry import STEP_MODULES, project_steps

    declaring = {
        module.name
        for module in pkgutil.walk_packages(ascend_port.rules.__path__, "ascend_port.rules.")
        if hasattr(importlib.import_module(module.name), "PROJECT_STEPS")
    }
    assert declaring == set(STEP_MODULES)
    assert [type(step).__name__ for step in project_steps()] == [
        "ExtensionOps",
        "OwnPackages",
        "ProjectDevices",
        "SharedHelpers",
        "TransformersPin",
        "FlashReason",
        "NpuExtra",
        "StaleLocks",
        "LaunchFlagSwitches",
        "GraphCapture",
        "LossScaling",
    ]


def test_the_functions_a_rule_writes_are_defined_in_its_module() -> None:
    """Rule.writes names the functions a rule writes into ported modules (a review applies them with their calls):
    each is named in the rule's module (its `def` in the text it writes, or the constant that text is built on), and
    the review knows it."""
    from ascend_port.rules.registry import all_rules, written_definitions

    writing = [r for r in all_rules() if r.writes]
    assert writing  # (NPU120's _npu_device_count, NPU700's range stack)
    for r in writing:
        source = (PACKAGE.parent / r.path).read_text("utf-8")
        for name in r.writes:
            assert f"def {name}(" in source or f'"{name}"' in source, (r.id, name)
            assert name in written_definitions(), (r.id, name)


# What run/, reports/ and git/ still import of specific rule modules (issue 28): nothing. Nothing may be added here:
# what those layers need of the rules goes through rules/registry.py (the project steps, the catalogue).
RULE_IMPORTS_LEFT: dict[str, set[str]] = {}


def test_the_layers_above_the_rules_know_them_through_the_registry() -> None:
    """run/, reports/ and git/ import the rules' registry, not a rule module (but RULE_IMPORTS_LEFT, which may only
    shrink)."""
    edges = graph()
    found = {}
    for name, imported in edges.items():
        if layer(name) in ("run", "reports", "git"):
            rules = {m for m in imported if m.startswith("ascend_port.rules.") and m != "ascend_port.rules.registry"}
            if rules:
                found[name] = rules
    assert found == RULE_IMPORTS_LEFT
