"""Shared by tests/test_fuzz.py (a bounded run) and scripts/fuzz.py (a long one): the invariants every port must
keep, and mutators that put CUDA code into any program.

Invariants, for every input and every rule selection:
- no exception escapes ``port_source`` or ``port_module`` but PortError, and PortError only for input that LibCST
  or this interpreter cannot parse;
- every output parses (and compiles, when the input compiles);
- applying the port twice equals applying it once.
"""

from __future__ import annotations

import ast
import random
import warnings
from functools import cache
from pathlib import Path

import libcst as cst

from ascend_port.core.catalogue import DOMAINS
from ascend_port.core.porting import PortError
from ascend_port.core.selection import Selection
from ascend_port.core.sources import SourceError, decode_python, python_lines
from ascend_port.port.python import active_transformers, port_module, port_source, trigger_patterns

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

# Every transform alone, and all of them together.
SELECTIONS = [Selection()] + [Selection(select=(prefix,)) for prefix in DOMAINS]

CUDA_STATEMENTS = [
    "x = x.cuda()",
    "torch.cuda.synchronize()",
    "device = 'cuda:0'",
    "t = torch.randn(2, device='cuda')",
    "model = model.to('cuda')",
    "if torch.cuda.is_available(): pass",
    "torch.cuda.set_device(local_rank)",
    "torch.backends.cuda.matmul.allow_tf32 = True",
    "torch.backends.cudnn.allow_tf32 = True",
    "os.environ['CUDA_VISIBLE_DEVICES'] = '0'",
    "dist.init_process_group('nccl')",
    "torch.distributed.init_process_group(backend='nccl')",
    "scaler = torch.cuda.amp.GradScaler()",
    "with torch.cuda.amp.autocast(): pass",
    "from torch.cuda.amp import autocast",
    "import torch",
    "import torch.nn.functional as F",
    "out = F.scaled_dot_product_attention(q, k, v, is_causal=True)",
    "from flash_attn import flash_attn_func",
    "cap = torch.cuda.get_device_capability()",
    "g = torch.cuda.CUDAGraph()",
    "x = x.half().cuda(non_blocking=True)",
    "del x.is_cuda",
    "assert t.is_cuda",
]
CUDA_SUFFIXES = [".cuda()", ".cuda(0)", ".to('cuda')", ".to(device='cuda:0')", ".cuda(non_blocking=True)"]


@cache
def golden_statements() -> tuple[str, ...]:
    """One-line statements of the golden inputs that contain a trigger: the constructs the rules are written for,
    which grows with the rules."""
    patterns = trigger_patterns(active_transformers(Selection()))
    found: set[str] = set()
    for path in sorted(GOLDEN.glob("NPU*/*.in.py")):
        text = path.read_text("utf-8")
        try:
            tree = _parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt) and not hasattr(node, "body") and node.lineno == node.end_lineno:
                segment = ast.get_source_segment(text, node)
                if segment and any(p.search(segment) for p, _ in patterns) and _compiles(segment):
                    found.add(segment)  # (not `return x`: it would not compile at the top level)
    return tuple(sorted(found))


def read_source(path: Path) -> str:
    """A real file as the tool reads it (BOM, PEP 263 cookie); an undecodable one gives an empty module."""
    try:
        return decode_python(path.read_bytes()).text
    except SourceError:
        return ""


def _parse(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def _compiles(text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(text, "<fuzz>", "exec", dont_inherit=True)
            return True
        except (SyntaxError, ValueError):
            return False


def _cst_parses(text: str) -> bool:
    try:
        cst.parse_module(text)
        return True
    except (cst.ParserSyntaxError, RecursionError):
        return False


def _ast_parses(text: str) -> bool:
    try:
        _parse(text)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


# --- mutators ---------------------------------------------------------------------------------------------------


def _statement_starts(text: str, tree: ast.Module) -> list[tuple[int, str]]:
    """(0-based line, indentation) of every statement that starts its own line: a statement inserted there, at that
    indentation, keeps the module valid."""
    lines = python_lines(text)
    starts = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        decorators = getattr(node, "decorator_list", None)
        first = decorators[0] if decorators else node
        line = lines[first.lineno - 1] if first.lineno <= len(lines) else ""
        head = line.encode("utf-8")[: first.col_offset].decode("utf-8", "replace")
        if decorators:
            head = head[:-1] if head.endswith("@") else "x"
        if head.strip() or line.lstrip().startswith("elif"):
            continue
        starts.append((first.lineno - 1, head))
    return starts


def insert_statements(text: str, rng: random.Random, count: int) -> str:
    """Insert ``count`` CUDA statements before random statements (or at the end of an empty module)."""
    pool = CUDA_STATEMENTS + list(golden_statements())
    valid = _compiles if _compiles(text) else _ast_parses  # keep what holds of the input
    for _ in range(count):
        try:
            tree = _parse(text)
        except (SyntaxError, ValueError, RecursionError):
            return text
        lines = python_lines(text)
        starts = _statement_starts(text, tree)
        newline = next((ln[len(ln.rstrip("\r\n")) :] for ln in lines if ln.rstrip("\r\n") != ln), "\n")
        statement = rng.choice(pool)
        if not starts:
            if lines and not lines[-1].endswith(("\n", "\r")):
                lines[-1] += newline
            lines.append(statement + newline)
        else:
            index, indent = rng.choice(starts)
            lines.insert(index, indent + statement + newline)
        candidate = "".join(lines)
        if valid(candidate):
            text = candidate
    return text


def wrap_expressions(text: str, rng: random.Random, count: int) -> str:
    """Append ``.cuda()`` (or a cousin) to random one-line expressions: ``x = f(a)`` -> ``x = (f(a)).cuda()``."""
    valid = _compiles if _compiles(text) else _ast_parses
    for _ in range(count):
        try:
            tree = _parse(text)
        except (SyntaxError, ValueError, RecursionError):
            return text
        in_fstrings = {id(n) for j in ast.walk(tree) if isinstance(j, ast.JoinedStr) for n in ast.walk(j)}
        nodes = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.expr)
            and id(n) not in in_fstrings
            and n.lineno == n.end_lineno
            and not isinstance(n, (ast.Starred, ast.Slice))
        ]
        if not nodes:
            return text
        node = rng.choice(nodes)
        lines = python_lines(text)
        raw = lines[node.lineno - 1].encode("utf-8")
        start, end = node.col_offset, node.end_col_offset or node.col_offset
        if rng.random() < 0.3 and isinstance(node, ast.Constant) and isinstance(node.value, str):
            new = b"'cuda:0'"
        else:
            new = b"(" + raw[start:end] + b")" + rng.choice(CUDA_SUFFIXES).encode()
        lines[node.lineno - 1] = (raw[:start] + new + raw[end:]).decode("utf-8", "surrogateescape")
        try:
            candidate = "".join(lines)
        except UnicodeEncodeError:
            continue
        if valid(candidate):
            text = candidate
    return text


def mutate(text: str, rng: random.Random) -> str:
    text = insert_statements(text, rng, rng.randint(1, 4))
    return wrap_expressions(text, rng, rng.randint(0, 3))


# --- invariants -------------------------------------------------------------------------------------------------


class InvariantBroken(AssertionError):
    pass


def check(text: str, selection: Selection) -> str:
    """Port ``text`` both ways and check the invariants; returns "rejected", "unchanged" or "changed"."""
    outcome = _check_port_source(text, selection)
    _check_port_module(text, selection)
    return outcome


def _check_port_source(text: str, selection: Selection) -> str:
    try:
        first = port_source(text, selection)
    except PortError as error:
        if "nested too deeply" not in str(error) and _ast_parses(text) and _cst_parses(text):
            raise InvariantBroken(f"PortError on input both parsers read: {error}") from None
        return "rejected"
    if first.new_text is None:
        return "unchanged"
    _check_output(text, first.new_text)
    try:
        second = port_source(first.new_text, selection)
    except PortError as error:
        raise InvariantBroken(f"the port of the port fails: {error}") from None
    if second.new_text is not None and second.new_text != first.new_text:
        raise InvariantBroken("port_source is not idempotent:\n" + _short_diff(first.new_text, second.new_text))
    return "changed"


def _check_port_module(text: str, selection: Selection) -> None:
    try:
        module = cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError):
        return
    try:
        new_module, _ = port_module(module, selection)
    except PortError:
        if _ast_parses(text):
            raise
        return
    new_text = new_module.code
    if new_text == text:
        return
    _check_output(text, new_text)
    again, _ = port_module(cst.parse_module(new_text), selection)
    if again.code != new_text:
        raise InvariantBroken("port_module is not idempotent:\n" + _short_diff(new_text, again.code))


def _check_output(old: str, new: str) -> None:
    if not _cst_parses(new):
        raise InvariantBroken("LibCST cannot parse the output")
    if _ast_parses(old) and not _ast_parses(new):
        raise InvariantBroken("the output does not parse")
    if _compiles(old) and not _compiles(new):
        raise InvariantBroken("the output does not compile")


def _short_diff(a: str, b: str) -> str:
    import difflib

    return "".join(list(difflib.unified_diff(a.splitlines(True), b.splitlines(True), n=1))[:40])
