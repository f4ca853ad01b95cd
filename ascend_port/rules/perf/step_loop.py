"""NPU900 and NPU901: what stalls the NPU's task queue in a training or data loop. Both only report (informational):
the fix changes what the code logs or when it copies, a choice for its author.

A step loop is a ``for``/``while`` loop whose own body (not a loop inside it) calls ``.backward(...)`` or an
optimizer's ``.step(...)``: the loop that runs once per training step. An epoch loop around it is no step loop, so a
sync once per epoch is not reported. A step method is the body a framework's loop calls once per step (Lightning's
and Hugging Face Trainer's ``training_step``, ``train_step``): its loop is not in the module, its body is read as if
it were one.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import libcst as cst

from ascend_port.core.catalogue import Confidence, Rule, rule
from ascend_port.core.findings import Finding
from ascend_port.python.module_facts import ModuleFacts, spans_any, statement_blocks
from ascend_port.python.scopes import Trigger
from ascend_port.python.transformer import PortTransformer

HIGH = Confidence.HIGH

HOST_SYNC = rule(
    "NPU900",
    "host-sync-in-step",
    HIGH,
    "A host sync in the training step loop (`.item()`, `.cpu()`, `.numpy()`, `.tolist()`, `print(loss)`, "
    "`float(loss)`, `synchronize()`): reported, never changed.",
    """
    torch_npu queues operators and returns at once (TASK_QUEUE_ENABLE); a value read back on the host waits until
    the NPU has run everything queued before it, so the host stops feeding the device once a step. The loops read
    are those whose own body calls `.backward(...)` or an optimizer's `.step(...)`, and the methods a framework's
    loop calls once per step (`training_step` of Lightning and Hugging Face's Trainer, `train_step`); in them
    `.item()`, `.cpu()`, `.numpy()`, `.tolist()`, `torch.npu.synchronize()` (or CUDA's), and `print`/`float`/`int`
    of the loss (what `.backward()` is called on, or what a step method returns) are reported. A sync under a
    logging condition (`if step % 100 == 0:`, an `if` on a name that says log, print, interval, freq, every or
    display) runs once in N steps, a cost the author chose: it is not reported. Nor are syncs in an evaluation loop
    (no `.backward()`), once per epoch, or in a function defined in the loop. Keep a running sum on the device
    (`total += loss.detach()`) and read it at the logging step. This rule only reports (it writes neither code nor a
    TODO).

    Before:
        for batch in loader:
            loss = model(batch)
            loss.backward()
            optimizer.step()
            running += loss.item()
    After:
        for batch in loader:
            loss = model(batch)
            loss.backward()
            optimizer.step()
            running += loss.item()
    Stays (a sync once in 100 steps):
        for step, batch in enumerate(loader):
            loss = model(batch)
            loss.backward()
            optimizer.step()
            if step % 100 == 0:
                print(loss.item())
    """,
    informational=True,
)
BLOCKING_COPY = rule(
    "NPU901",
    "pinned-copy-blocking",
    HIGH,
    "`.to(device)`/`.cuda()` of a batch from a DataLoader with `pin_memory=True`, without `non_blocking=True`: "
    "reported, never changed.",
    """
    A DataLoader with `pin_memory=True` puts its batches in page-locked memory so that their copy to the device can
    run while the host goes on (`non_blocking=True`); a blocking copy waits for it, and the pinning buys nothing.
    Reported where the module builds a DataLoader with `pin_memory=True` (the literal) under a name, and a loop over
    that name (or `enumerate`/`tqdm` of it) copies what it yields, or a comprehension over it, with `.to(...)` to a
    device, `.cuda()` or `.npu()` and no `non_blocking=`. A `.to(dtype)` alone is no copy to the device. This rule
    only reports (it writes neither code nor a TODO).

    Before:
        from torch.utils.data import DataLoader

        loader = DataLoader(dataset, batch_size=32, pin_memory=True)
        for inputs, labels in loader:
            inputs = inputs.to(device)
    After:
        from torch.utils.data import DataLoader

        loader = DataLoader(dataset, batch_size=32, pin_memory=True)
        for inputs, labels in loader:
            inputs = inputs.to(device)
    Stays (already non-blocking):
        from torch.utils.data import DataLoader

        loader = DataLoader(dataset, batch_size=32, pin_memory=True)
        for inputs, labels in loader:
            inputs = inputs.to(device, non_blocking=True)
    """,
    informational=True,
)

# --- tables ------------------------------------------------------------------------------------------------------

_SYNC_METHODS = frozenset({"item", "cpu", "numpy", "tolist"})
_SYNCHRONIZE = re.compile(r"(?:^|\.)(?:cuda|npu)\.synchronize$")
_PRINTS = frozenset({"print", "float", "int"})
_COPIES = frozenset({"to", "cuda", "npu"})
# The receiver of an optimizer step (`optimizer.step()`, `opt_g.step()`, `scaler.step(optimizer)`); not a
# scheduler's or an environment's `.step()`.
_OPTIMIZER = re.compile(r"(?i)optim|^opt(?:_|\d|$)|scaler")
# A condition that makes a sync run once in N steps: `%`, or a name that says it is about logging.
_LOGGING_NAME = re.compile(r"(?i)log|print|interval|freq|every|display")
_DTYPES = frozenset(
    "float float16 float32 float64 half bfloat16 double long int int8 int16 int32 int64 bool uint8 short".split()
)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
# Methods a framework's loop calls once per training step: Lightning's and Hugging Face Trainer's `training_step`,
# and the `train_step` of Keras-style trainers and many training scripts.
_STEP_METHODS = frozenset({"training_step", "train_step"})
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)  # (what holds statements: not an expression)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_ADVICE = {
    HOST_SYNC.id: "the host waits for the NPU to finish the step's queued operators before it can queue the next "
    "(keep the value on the device, read it at a logging step)",
    BLOCKING_COPY.id: "the host waits for the copy; .to(device, non_blocking=True) lets it overlap the step",
}

_PINNED = re.compile(r"pin_memory\s*=\s*True")
# (statements only: the notes are read from the module's ast; a chunk only says the module has some to read)
TRIGGERS = (
    r"\.backward\s*\(",
    r"def\s+(?:training|train)_step\b",
    Trigger(r"\.(?:to|cuda|npu)\s*\(", also=("pin_memory",), when=lambda text: bool(_PINNED.search(text))),
)

Note = tuple[Rule, int, str]  # (rule, line, message)


# --- reading the module (Python's ast: the whole module once, whatever chunk asks) ---------------------------------


def _name_of(node: ast.AST) -> str:
    """The last name of ``a.b.c`` (``c``), or of a name; "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _expressions(statement: ast.stmt) -> list[ast.AST]:
    """The statement's own expressions (a compound statement's header: its test, iterable, items), not those of
    the statements in its blocks, nor a lambda's body."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        if node is not statement:
            found.append(node)
        if not isinstance(node, ast.Lambda):
            stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, _BLOCKS))
    return found


def _names(node: ast.AST) -> set[str]:
    """Every plain name and attribute name under ``node``."""
    return {
        n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node) if isinstance(n, ast.Name | ast.Attribute)
    }


def _is_step(call: ast.AST) -> bool:
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return False
    method = call.func.attr
    return method == "backward" or method == "step" and bool(_OPTIMIZER.search(_name_of(call.func.value)))


def _loss_names(call: ast.Call) -> set[str]:
    """The names backward is called on: `loss.backward()`, `accelerator.backward(loss)`, `scaler.scale(loss)...`."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "backward"):
        return set()
    found = set()
    receiver = call.func.value
    if isinstance(receiver, ast.Name):
        found.add(receiver.id)
    elif isinstance(receiver, ast.Call) and receiver.args and isinstance(receiver.args[0], ast.Name):
        found.add(receiver.args[0].id)  # scaler.scale(loss).backward()
    if call.args and isinstance(call.args[0], ast.Name):
        found.add(call.args[0].id)  # accelerator.backward(loss)
    return found


def _logging_condition(test: ast.expr) -> bool:
    return any(
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Mod)
        or isinstance(node, ast.Name)
        and bool(_LOGGING_NAME.search(node.id))
        for node in ast.walk(test)
    )


def _tensor_names(node: ast.AST) -> list[str]:
    """The names an argument passes on as they are (`loss`, `f"{loss}"`), not those it calls a method of (a
    `loss.item()` is reported as such)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.JoinedStr):
        return [
            part.value.id
            for part in node.values
            if isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name)
        ]
    return []


def _pinned_loaders(facts: ModuleFacts) -> frozenset[str]:
    """The names (or attribute names: `self.train_loader`) the module sets to a `DataLoader(..., pin_memory=True)`."""
    found: set[str] = set()
    for node in facts.statements(ast.Assign):
        if not isinstance(node.value, ast.Call):
            continue
        pinned = any(
            k.arg == "pin_memory" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in node.value.keywords
        )
        if pinned and _name_of(node.value.func).endswith("DataLoader"):
            found |= {_name_of(target) for target in node.targets} - {""}
    return frozenset(found)


def _copy_without_non_blocking(call: ast.Call) -> bool:
    """`.to(<device>)`, `.cuda()`, `.npu()` without `non_blocking=` (nor a `**kwargs` that may hold it)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in _COPIES):
        return False
    keywords = {k.arg for k in call.keywords}
    if "non_blocking" in keywords or None in keywords:
        return False
    if func.attr == "to" and "device" not in keywords:
        first = call.args[0] if call.args and not isinstance(call.args[0], ast.Starred) else None
        if first is None or _name_of(first) in _DTYPES or "dtype" in _name_of(first).lower():
            return False  # a cast, not a copy to the device
    return True


# What the reading looks for, as text: the statements on no such line are never read (a training script of a
# thousand lines holds a handful).
_SYNC_TEXT = (".item(", ".cpu(", ".numpy(", ".tolist(", "synchronize(", "print(", "float(", "int(")
_STEP_TEXT = ("backward(", ".step(")
_COPY_TEXT = (".to(", ".cuda(", ".npu(")
# (a loop or an `if` around the statement read, innermost last: ("loop", node), ("if", test))
Frame = tuple[str, ast.AST]


class _Reading:
    """One module's notes, from a walk of its statements (never its expressions, but those of the statements on
    the lines that say what it looks for)."""

    def __init__(self, facts: ModuleFacts, pinned: frozenset[str]) -> None:
        self.facts = facts
        self.pinned = pinned
        wanted = _SYNC_TEXT + (_COPY_TEXT if pinned else ())
        self.lines = facts.lines_with(*wanted)
        self.step_lines = facts.lines_with(*_STEP_TEXT)
        self.steps: dict[int, tuple[bool, frozenset[str]]] = {}  # id(loop) -> (a step loop?, its loss names)
        self.notes: list[Note] = []

    def block(self, statements: list[ast.stmt], frames: tuple[Frame, ...]) -> None:
        for statement in statements:
            if not spans_any(statement, self.lines):
                continue
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name in _STEP_METHODS:
                self.block(statement.body, (("step", statement),))  # (called once a step by the framework's loop)
            elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.block(statement.body, ())  # (a definition runs when called: no loop around it counts)
            elif isinstance(statement, _LOOPS):
                inner = (*frames, ("loop", statement))
                if isinstance(statement, ast.While):
                    self.read(statement, inner)  # (its test runs once an iteration)
                else:
                    self.read(statement, frames)  # (its iterable, once)
                self.block(statement.body, inner)
                self.block(statement.orelse, frames)
            elif isinstance(statement, ast.If):
                self.read(statement, frames)
                self.block(statement.body, (*frames, ("if", statement.test)))
                self.block(statement.orelse, frames)
            else:
                self.read(statement, frames)
                for statements in statement_blocks(statement):
                    self.block(statements, frames)

    def read(self, statement: ast.stmt, frames: tuple[Frame, ...]) -> None:
        """The candidate calls among the statement's own expressions."""
        expressions = _expressions(statement)
        batches = self.batches(frames, expressions) if self.pinned else set()
        for node in expressions:
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute):
                if func.attr in _SYNC_METHODS and not node.args and not node.keywords:
                    self.host_sync(node, frames, f".{func.attr}() in the training step loop")
                elif func.attr == "synchronize" and _SYNCHRONIZE.search(_dotted(func)) and not node.args:
                    self.host_sync(node, frames, f"{_dotted(func)}() in the training step loop")
                elif batches and _copy_without_non_blocking(node) and _names(func.value) & batches:
                    message = (
                        f".{func.attr}() of a batch from a DataLoader with pin_memory=True, without non_blocking=True"
                    )
                    self.note(BLOCKING_COPY, node, message)
            elif isinstance(func, ast.Name) and func.id in _PRINTS and node.args:
                read = {name for arg in node.args for name in _tensor_names(arg)}
                if read:
                    what = f"{func.id}({sorted(read)[0]}) of the loss in the training step loop"
                    self.host_sync(node, frames, what, read)

    def host_sync(self, call: ast.Call, frames: tuple[Frame, ...], what: str, reads: set[str] | None = None) -> None:
        """Note ``call`` when it runs once per step: in a step loop, not under a logging condition inside it.
        ``reads``: it syncs only if it reads the loss (`print(loss)`)."""
        gated = False
        for kind, node in reversed(frames):
            if kind == "if":
                gated = gated or _logging_condition(node)  # type: ignore[arg-type]
                continue
            is_step, losses = self.step_method(node) if kind == "step" else self.step_loop(node)
            if is_step:
                if kind == "step":  # (the framework's loop runs the method: name the method, not a loop)
                    what = what.replace("the training step loop", f"{node.name}, once a training step")  # type: ignore[attr-defined]
                if not gated and (reads is None or reads & losses):
                    self.note(HOST_SYNC, call, what)
                return

    def step_loop(self, loop: ast.AST) -> tuple[bool, frozenset[str]]:
        """Is ``loop`` a step loop (its own body, not a loop inside it, calls backward or an optimizer's step), and
        the names of its losses."""
        known = self.steps.get(id(loop))
        if known is None:
            calls: list[ast.Call] = []
            stack: list[ast.stmt] = list(loop.body)  # type: ignore[attr-defined]
            while stack:
                statement = stack.pop()
                if isinstance(statement, (*_LOOPS, *_SCOPES)) or not spans_any(statement, self.step_lines):
                    continue
                calls += [n for n in _expressions(statement) if _is_step(n)]  # type: ignore[misc]
                stack += [s for statements in statement_blocks(statement) for s in statements]
            known = (bool(calls), frozenset(name for call in calls for name in _loss_names(call)))
            self.steps[id(loop)] = known
        return known

    def step_method(self, method: ast.AST) -> tuple[bool, frozenset[str]]:
        """A step method is a step; its losses: what it calls backward on, and the names it returns."""
        losses: set[str] = set()
        for node in ast.walk(method):
            if isinstance(node, ast.Call):
                losses |= _loss_names(node)
            elif isinstance(node, ast.Return) and node.value is not None:
                losses |= set(_tensor_names(node.value))
        return True, frozenset(losses)

    def batches(self, frames: tuple[Frame, ...], expressions: list[ast.AST]) -> set[str]:
        """The names bound to what a pinned DataLoader yields: targets of the loops over it (or over what they
        bound), and of the statement's comprehensions over those."""
        found: set[str] = set()
        clauses = [(node.iter, node.target) for kind, node in frames if isinstance(node, (ast.For, ast.AsyncFor))]
        clauses += [(g.iter, g.target) for n in expressions if isinstance(n, _COMPREHENSIONS) for g in n.generators]
        for iterable, target in clauses:  # (outermost first; a statement's comprehensions in walk order)
            if _names(iterable) & (self.pinned | found):
                found |= _names(target)
        return found

    def note(self, rule_: Rule, node: ast.Call, what: str) -> None:
        self.notes.append((rule_, node.lineno, f"{what}: {_ADVICE[rule_.id]}"))


def step_loop_notes(facts: ModuleFacts) -> list[Note]:
    """NPU900/NPU901's notes of the module, in line order, one a line and rule (`x.detach().cpu().numpy()` is one
    sync: the outermost call's name is given)."""
    tree = facts.tree
    if tree is None:
        return []
    pinned = _pinned_loaders(facts) if not facts.text or _PINNED.search(facts.text) else frozenset()
    reading = _Reading(facts, pinned)
    reading.block(tree.body, ())
    unique: dict[tuple[str, int], Note] = {}
    for note in sorted(reading.notes, key=lambda n: (n[1], n[0].id)):  # (stable: the outer call of a line first)
        unique.setdefault((note[0].id, note[1]), note)
    return list(unique.values())


@dataclass
class _Reported:
    """Whether a module's notes were reported (a fact: one object per module, whichever chunk comes first)."""

    done: bool = False


def _reported(facts: ModuleFacts) -> _Reported:
    return _Reported()


class StepLoopTransformer(PortTransformer):
    """NPU900 and NPU901: the module's notes (``step_loop_notes``, read from its ``ast``), reported with the first
    chunk a trigger of theirs made: a statement that calls ``.backward()`` (or copies, in a module with a pinned
    DataLoader), never the whole loop, which LibCST would parse for nothing (they change no code)."""

    TRIGGERS = TRIGGERS
    RULES = (HOST_SYNC, BLOCKING_COPY)

    def visit_Call(self, node: cst.Call) -> None:
        reported = self.ctx.fact(_reported)
        if reported.done:
            return
        reported.done = True
        model = self.ctx.devices()
        for rule_, line, message in self.ctx.fact(step_loop_notes):
            if not self.enabled(rule_) or self.ctx.suppressed(rule_, line=line):
                continue
            if model is not None and not model.keeps_nothing() and model.keeps(line):
                continue  # (another device's code)
            self.ctx.findings.append(Finding(rule_, line, message, applied=False))
