"""Writes the scaffold of one op: the msOpGen prototype, the Ascend C host and kernel sources, the torch binding
(TORCH_LIBRARY_IMPL for PrivateUse1 calling the aclnn API), the Python package that falls back to the CPU reference,
the reference and its test. The text comes from ``templates/`` (package data); this module computes what fills it."""

from __future__ import annotations

import json
import re
import string
import textwrap
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ascend_port.scaffold.fallback import Fallback, find_fallback, is_backward
from ascend_port.scaffold.ops import ExtensionOp
from ascend_port.scaffold.signature import BOOL, DIM, FLOAT, INT, STR, TENSOR, Param, Signature

# Op names that say nothing without their module (`selective_scan_cuda.fwd`): the scaffold is named for both.
GENERIC_NAMES = {"fwd", "bwd", "forward", "backward", "run", "apply", "call", "op", "compute", "kernel", "launch"}
_SIZES = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13)
_SCHEMA = {TENSOR: "Tensor", BOOL: "bool", INT: "int", FLOAT: "float", STR: "str"}
_CPP = {TENSOR: "const at::Tensor&", BOOL: "bool", INT: "int64_t", FLOAT: "double", STR: "c10::string_view"}
_ATTR = {BOOL: "Bool()", INT: "Int()", FLOAT: "Float()", STR: "String()"}


class ScaffoldError(Exception):
    """The scaffold cannot be written (files exist, the op has no readable C++ function); the message says why."""


def op_id(op: ExtensionOp) -> str:
    """The scaffold's name: the op's, with its module's stem where the op's alone is generic."""
    name = re.sub(r"\W", "_", op.name)
    if name.lower() in GENERIC_NAMES or len(name) <= 3:
        stem = re.sub(r"_cuda(_\w+)?$", "", op.module.rsplit(".", 1)[-1]).strip("_") or "ext"
        name = f"{stem}_{name}"
    return name


def op_type(name: str) -> str:
    """CamelCase operator type, as Ascend C names operators (`causal_conv1d_fwd` -> `CausalConv1dFwd`)."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


@dataclass(frozen=True)
class Plan:
    """What one scaffold is made of."""

    op: ExtensionOp
    signature: Signature
    fallback: Fallback | None
    out: Path
    top: Path

    @property
    def name(self) -> str:
        return op_id(self.op)

    @property
    def package(self) -> str:
        return f"{self.name}_npu"

    @property
    def inputs(self) -> list[Param]:
        return [p for p in self.signature.params if p.kind == TENSOR and not p.written]

    @property
    def outputs(self) -> list[str]:
        written = [p.name for p in self.signature.params if p.written]
        return written or ["out"]

    @property
    def attrs(self) -> list[Param]:
        return [p for p in self.signature.params if p.kind != TENSOR]


def plan(top: Path, op: ExtensionOp, out: Path | None) -> Plan:
    if op.signature is None:
        raise ScaffoldError(
            f"{op.qualified}: the C++ function bound to it (in {op.binding}) was not found or not read: "
            "scaffold needs its parameters"
        )
    name = op_id(op)
    return Plan(op, op.signature, find_fallback(top, op), out or top / "ascend_ops" / name, top)


def _template(name: str) -> string.Template:
    return string.Template(
        resources.files("ascend_port.scaffold").joinpath("templates").joinpath(name).read_text("utf-8")
    )


def _shapes(p: Plan) -> tuple[dict[str, tuple[str, ...]], str]:
    """Parameter -> its dimensions, from the fallback's docstring first (its names are Python's), then the C++
    checks; and where they come from."""
    doc = p.fallback.shapes if p.fallback else {}
    shapes = {**p.signature.shapes, **doc}
    sources = []
    if doc:
        sources.append(f"{p.fallback.name}'s docstring and its `a, b = x.shape`" if p.fallback else "")
    if p.signature.shapes:
        sources.append(f"CHECK_SHAPE in {p.signature.file}")
    return shapes, " and ".join(sources) or "no shape found: edit them"


def _sizes(shapes: dict[str, tuple[str, ...]], order: list[str]) -> dict[str, int]:
    symbols: list[str] = []
    for name in order:
        for dim in shapes.get(name, ()):
            match = DIM.match(dim)
            if match and match.group(1) not in symbols:
                symbols.append(match.group(1))
    return {s: _SIZES[i % len(_SIZES)] for i, s in enumerate(symbols)}


def _evaluate(dims: tuple[str, ...], sizes: dict[str, int]) -> tuple[int, ...]:
    values = []
    for dim in dims:
        match = DIM.match(dim)
        assert match is not None  # (shapes hold only such dimensions)
        value = sizes[match.group(1)]
        if match.group(2):
            value += int(match.group(3)) * (1 if match.group(2) == "+" else -1)
        values.append(max(value, 1))
    return tuple(values)


def _input_line(param: Param, shapes: dict[str, tuple[str, ...]], sizes: dict[str, int]) -> str:
    key = f'        "{param.name}": '
    dims = shapes.get(param.name)
    if param.kind == TENSOR and param.optional:
        return key + "None,  # optional: left out (pass a tensor to test that path)"
    if param.kind == TENSOR:
        shape = _evaluate(dims, sizes) if dims else (2, 8)
        note = f"({', '.join(dims)})" if dims else "TODO(ascend-port): shape unknown (no CHECK_SHAPE, no docstring)"
        args = ", ".join(map(str, shape))
        if param.written:
            return key + f"torch.empty({args}, dtype=dtype, device=device),  # {note}, written by the op"
        return key + f"rand({args}),  # {note}"
    value = {BOOL: "False", INT: "1", FLOAT: "0.5", STR: '""'}.get(param.kind, "None")
    todo = "" if param.kind in (BOOL, FLOAT) else "  TODO(ascend-port): a value the op accepts"
    return key + f"{value},  # {param.cpp_type}{todo}".rstrip()


def _expected(p: Plan, shapes: dict[str, tuple[str, ...]], sizes: dict[str, int]) -> tuple[str, str]:
    for name, why in (
        ("out", "the shape the fallback's docstring gives its result"),
        (next((q.name for q in p.signature.params if q.written), ""), "the tensor the op writes into"),
        (p.signature.result_like or "", f"the op returns empty_like({p.signature.result_like})"),
    ):
        if name and name in shapes:
            return repr(_evaluate(shapes[name], sizes)), f"{why}: ({', '.join(shapes[name])})"
    return "None", "TODO(ascend-port): the result's shape is not known here: set it"


def _call_sites(p: Plan) -> str:
    if not p.op.call_sites:
        return "none found in the project's Python"
    parts = []
    for site in p.op.call_sites[:6]:
        where = f"{site.file}:{site.line}" + (f" in {site.function}()" if site.function else "")
        use = f"unpacked into {site.unpacked} names" if site.unpacked else ("used" if site.used else "discarded")
        parts.append(f"{where} (result {use})")
    more = len(p.op.call_sites) - 6
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _arity_check(p: Plan) -> str:
    unpacked = max((s.unpacked for s in p.op.call_sites), default=0)
    if not unpacked:
        return "# (the call sites take one result, or none)"
    if p.fallback is not None:
        return (
            f"# The call sites unpack {unpacked} results: {p.fallback.name} gives the first; the NPU operator must "
            "give them all"
        )
    return f"assert isinstance(result, (tuple, list)) and len(result) >= {unpacked}  # as the call sites unpack it"


def reference_source(p: Plan) -> str:
    """reference.py: the fallback copied and called with the op's arguments, or a NotImplementedError to write."""
    params = [q.name for q in p.signature.params]
    cpp = f"{p.signature.function}() in {p.signature.file}:{p.signature.line}"
    head = [f'"""CPU reference of {p.op.qualified} ({cpp}), the op `ascend-port scaffold` wrote the Ascend C']
    lines = [f"def {p.name}({', '.join(params)}):"]
    doc = f'    """{p.op.qualified}: the arguments of the C++ function, in its order'
    written = [q.name for q in p.signature.params if q.written]
    doc += f"; the result is written into {', '.join(written)}" if written else ""
    lines.append(doc + '."""')
    if p.fallback is None:
        why = (
            "a backward op: its reference is the gradient of the forward op's reference (torch.autograd.grad)"
            if is_backward(p.op)
            else "no pure-torch version of it was found beside its call sites"
        )
        head.append(f'operator for. {why[0].upper() + why[1:]}: write it from the CUDA kernels."""')
        lines += [
            "    raise NotImplementedError(",
            f'        "TODO(ascend-port): write the CPU reference of {p.op.qualified} from its CUDA kernels "',
            f'        "({p.signature.file}): {why}"',
            "    )",
        ]
        return "\n".join([*_wrap(head), "", "from __future__ import annotations", "", "", *lines]) + "\n"
    fb = p.fallback
    head.append(
        f"operator for: the project's own pure-torch version, {fb.name} ({fb.file}:{fb.line}), copied here with what "
        'it uses of its module, so that it runs without the project\'s CUDA imports."""'
    )
    lowered = {q.lower(): q for q in params}
    passed = [f"{a}={lowered[a.lower()]}" for a in fb.params if a.lower() in lowered]
    unmatched = [q for q in params if q.lower() not in {a.lower() for a in fb.params} and q not in written]
    lines.append(f"    result = {fb.name}({', '.join(passed)})")
    if unmatched:
        lines.append(
            f"    # TODO(ascend-port): {fb.name} has no parameter for {', '.join(unmatched)}: check that its defaults "
            "compute what the op computes with them (or adapt the call)"
        )
    if written:
        lines += [
            "    first = result[0] if isinstance(result, (tuple, list)) else result",
            f"    {written[0]}.copy_(first)",
            "    return None  # (the C++ op returns nothing: it writes its result)",
        ]
    else:
        lines.append("    return result")
    body = [*_wrap(head), "", "from __future__ import annotations", "", *fb.imports, *([""] if fb.imports else []), ""]
    body += [f"# Copied from {fb.file}:{fb.line} (the project's own code).", fb.source, "", "", *lines]
    return "\n".join(body) + "\n"


def _wrap(head: list[str]) -> list[str]:
    """The module docstring's sentences, wrapped at 116 columns."""
    return textwrap.wrap(" ".join(head), 116)


def _op_def(p: Plan) -> str:
    types = "{ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16}"
    formats = "{ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND}"
    lines = []
    for q in p.inputs:
        kind = "OPTIONAL" if q.optional else "REQUIRED"
        lines.append(f'        this->Input("{q.name}").ParamType({kind}).DataType({types}).Format({formats});')
    for name in p.outputs:
        lines.append(f'        this->Output("{name}").ParamType(REQUIRED).DataType({types}).Format({formats});')
    for q in p.attrs:
        attr = _ATTR.get(q.kind, "ListInt()")
        note = "" if q.kind in _ATTR else f"  // TODO(ascend-port): {q.cpp_type}"
        lines.append(f'        this->Attr("{q.name}").AttrType(REQUIRED).{attr};{note}')
    return "\n".join(lines)


def _prototype(p: Plan) -> str:
    def desc(name: str, optional: bool) -> dict[str, object]:
        return {
            "name": name,
            "param_type": "optional" if optional else "required",
            "format": ["ND", "ND", "ND"],
            "type": ["float", "float16", "bfloat16"],
        }

    attr_types = {BOOL: "bool", INT: "int", FLOAT: "float", STR: "string"}
    entry = {
        "op": op_type(p.name),
        "language": "cpp",
        "input_desc": [desc(q.name, q.optional) for q in p.inputs],
        "output_desc": [desc(name, False) for name in p.outputs],
        "attr": [
            {"name": q.name, "param_type": "required", "type": attr_types.get(q.kind, "list_int")} for q in p.attrs
        ],
    }
    return json.dumps([entry], indent=4) + "\n"


def _kernel(p: Plan) -> dict[str, str]:
    inputs = [q.name for q in p.inputs if not q.optional]
    optional = [q.name for q in p.inputs if q.optional]
    gm = [*inputs, *optional, *p.outputs]
    first = inputs[0] if inputs else p.outputs[0]
    t = f"DTYPE_{first.upper()}"
    init, members = [], []
    for name in [*inputs, *p.outputs]:
        dtype = f"DTYPE_{name.upper()}"
        init.append(
            f"        {name}Gm.SetGlobalBuffer((__gm__ {dtype}*){name} + this->blockLength * AscendC::GetBlockIdx(), "
            "this->blockLength);"
        )
        queue = "inQueue" if name in inputs else "outQueue"
        init.append(f"        pipe.InitBuffer({queue}_{name}, BUFFER_NUM, this->tileLength * sizeof({dtype}));")
        position = "VECIN" if name in inputs else "VECOUT"
        members.append(f"    AscendC::TQue<AscendC::QuePosition::{position}, BUFFER_NUM> {queue}_{name};")
        members.append(f"    AscendC::GlobalTensor<{dtype}> {name}Gm;")
    if optional:
        init.append(
            f"        // TODO(ascend-port): the optional inputs ({', '.join(optional)}) may be null: check first"
        )
    copy_in = []
    for name in inputs:
        dtype = f"DTYPE_{name.upper()}"
        copy_in += [
            f"        AscendC::LocalTensor<{dtype}> {name}Local = inQueue_{name}.AllocTensor<{dtype}>();",
            f"        AscendC::DataCopy({name}Local, {name}Gm[progress * this->tileLength], this->tileLength);",
            f"        inQueue_{name}.EnQue({name}Local);",
        ]
    out = p.outputs[0]
    compute = [
        f"        AscendC::LocalTensor<DTYPE_{n.upper()}> {n}Local = inQueue_{n}.DeQue<DTYPE_{n.upper()}>();"
        for n in inputs
    ]
    compute.append(
        f"        AscendC::LocalTensor<DTYPE_{out.upper()}> {out}Local = outQueue_{out}.AllocTensor<DTYPE_{out.upper()}>();"
    )
    compute.append("        // TODO(ascend-port): the op's computation (a copy of the first input until then)")
    if inputs:
        compute.append(f"        AscendC::Adds({out}Local, {inputs[0]}Local, ({t})0, this->tileLength);")
    compute.append(f"        outQueue_{out}.EnQue<DTYPE_{out.upper()}>({out}Local);")
    compute += [f"        inQueue_{n}.FreeTensor({n}Local);" for n in inputs]
    copy_out = []
    for name in p.outputs:
        dtype = f"DTYPE_{name.upper()}"
        copy_out += [
            f"        AscendC::LocalTensor<{dtype}> {name}Local = outQueue_{name}.DeQue<{dtype}>();",
            f"        AscendC::DataCopy({name}Gm[progress * this->tileLength], {name}Local, this->tileLength);",
            f"        outQueue_{name}.FreeTensor({name}Local);",
        ]
    return {
        "gm_params": ", ".join(f"GM_ADDR {n}" for n in gm),
        "gm_args": ", ".join(gm),
        "init_buffers": "\n".join(init),
        "members": "\n".join(members),
        "copy_in": "\n".join(copy_in) or "        // (no required input)",
        "compute": "\n".join(compute),
        "copy_out": "\n".join(copy_out),
    }


def _binding(p: Plan) -> dict[str, str]:
    params = []
    for q in p.signature.params:
        if q.kind == TENSOR:
            cpp = "at::Tensor&" if q.written else ("const c10::optional<at::Tensor>&" if q.optional else _CPP[TENSOR])
        else:
            cpp = _CPP.get(q.kind, "at::IntArrayRef")
        params.append(f"{cpp} {q.name}")
    schema_args = []
    for q in p.signature.params:
        kind = _SCHEMA.get(q.kind, "int[]")
        kind = "Tensor(a!)" if q.written else (f"{kind}?" if q.optional else kind)
        schema_args.append(f"{kind} {q.name}")
    written = any(q.written for q in p.signature.params)
    result = p.signature.result
    returns = "()" if written or result == "none" else ("Tensor[]" if result == "tensors" else "Tensor")
    like = p.signature.result_like or (p.inputs[0].name if p.inputs else "")
    make = (
        "    // (the op writes into its arguments)"
        if written
        else f"    // TODO(ascend-port): the output's shape and dtype ({like}'s until then)\n"
        f"    at::Tensor out = at::empty_like({like});"
    )
    ret = {"()": "", "Tensor": "    return out;", "Tensor[]": "    return {out};  // TODO(ascend-port): every result"}
    tensor_names = [q.name for q in p.signature.params if q.kind == TENSOR and not q.written]
    aclnn = [*tensor_names, *(q.name for q in p.attrs), *p.outputs]
    return {
        "cpp_params": ", ".join(params),
        "schema": f"{p.name}({', '.join(schema_args)}) -> {returns}",
        "result_type": {"()": "void", "Tensor": "at::Tensor", "Tensor[]": "std::vector<at::Tensor>"}[returns],
        "make_outputs": make,
        "return_statement": ret[returns],
        "aclnn_args": ", ".join(aclnn),
    }


def render(p: Plan) -> dict[str, str]:
    """Relative path -> text of every file of the scaffold."""
    sig = p.signature
    shapes, shape_source = _shapes(p)
    order = [q.name for q in sig.params] + ["out"]
    sizes = _sizes(shapes, order)
    expected, expected_note = _expected(p, shapes, sizes)
    written = [q.name for q in sig.params if q.written]
    values = {
        "op_id": p.name,
        "op_type": op_type(p.name),
        "qualified": p.op.qualified,
        "package": p.package,
        "namespace": p.package,
        "guard": f"{p.name.upper()}_TILING_H",
        "cuda_function": f"{sig.function}()",
        "cuda_file": sig.file,
        "cuda_line": str(sig.line),
        "cuda_signature": f"{sig.function}({', '.join(q.cpp_type + ' ' + q.name for q in sig.params)})",
        "result_note": f"the CUDA op returns {sig.result}",
        "py_params": ", ".join(q.name for q in sig.params),
        "py_args": ", ".join(q.name for q in sig.params),
        "py_tuple": f"({', '.join(q.name for q in sig.params)}{',' if len(sig.params) == 1 else ''})",
        "sizes": repr(sizes),
        "shape_source": shape_source,
        "call_sites": _call_sites(p),
        "expected_shape": expected,
        "expected_note": expected_note,
        "inputs": "\n".join(_input_line(q, shapes, sizes) for q in sig.params),
        "written": ", ".join(written) or "none: the op returns its result",
        "written_names": repr(written),
        "arity_check": _arity_check(p),
        "infer_shapes": "\n".join(
            f"    *context->GetOutputShape({i}) = *first;  // {n}" for i, n in enumerate(p.outputs)
        ),
        "infer_dtypes": "\n".join(f"    context->SetOutputDataType({i}, dtype);" for i in range(len(p.outputs))),
        "op_def": _op_def(p),
        "reference_note": (
            f"the project's own {p.fallback.name} ({p.fallback.file}:{p.fallback.line}), copied"
            if p.fallback
            else "a NotImplementedError to replace with the op's computation in torch"
        ),
        "reference_step": (
            "reference.py calls the fallback with the arguments whose names match (a TODO names any other)."
            if p.fallback
            else "reference.py is a TODO until then, and the test skips saying so: write it first."
        ),
        **_kernel(p),
        **_binding(p),
    }
    name = p.name
    files = {
        f"{name}.json": _prototype(p),
        f"op_host/{name}_tiling.h": _template("op_tiling.h.tmpl").substitute(values),
        f"op_host/{name}.cpp": _template("op_host.cpp.tmpl").substitute(values),
        f"op_kernel/{name}.cpp": _template("op_kernel.cpp.tmpl").substitute(values),
        f"torch_binding/{name}_npu.cpp": _template("torch_binding.cpp.tmpl").substitute(values),
        "setup.py": _template("setup.py.tmpl").substitute(values),
        "build.sh": _template("build.sh.tmpl").substitute(values),
        f"{p.package}/__init__.py": _template("package_init.py.tmpl").substitute(values),
        f"{p.package}/reference.py": reference_source(p),
        f"test_{name}.py": _template("test_op.py.tmpl").substitute(values),
        "conftest.py": _conftest(p),
        "README.md": _template("README.md.tmpl").substitute(values),
    }
    return files


def _conftest(p: Plan) -> str:
    """Puts the scaffold's folder first on sys.path, so that its package imports however pytest is started."""
    return (
        f'"""pytest set-up of the {p.name} scaffold: its package is importable from the tests."""\n\n'
        "import sys\nfrom pathlib import Path\n\n"
        "sys.path.insert(0, str(Path(__file__).resolve().parent))\n"
    )


def write(p: Plan, force: bool) -> list[Path]:
    """Writes the scaffold; refuses (ScaffoldError) to replace any existing file unless ``force``."""
    files = render(p)
    existing = [p.out / rel for rel in files if (p.out / rel).exists()]
    if existing and not force:
        shown = ", ".join(str(path) for path in existing[:5]) + (" ..." if len(existing) > 5 else "")
        raise ScaffoldError(
            f"{len(existing)} file(s) exist and would be replaced: {shown}: use --force to replace them"
        )
    written = []
    for rel, text in files.items():
        path = p.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
        if rel == "build.sh":
            path.chmod(0o755)
        written.append(path)
    return written
