"""The C++ side of a scaffold: the msOpGen prototype, the OpDef registration, the Ascend C kernel class and the torch
binding for PrivateUse1, as the values that fill ``templates/`` (the C++ function's tensors become inputs, the ones
it writes or its result outputs, its scalars attributes)."""

from __future__ import annotations

import json

from ascend_port.scaffold.plan import Plan, op_type
from ascend_port.scaffold.signature import BOOL, FLOAT, INT, STR, TENSOR

_SCHEMA = {TENSOR: "Tensor", BOOL: "bool", INT: "int", FLOAT: "float", STR: "str"}
_CPP = {TENSOR: "const at::Tensor&", BOOL: "bool", INT: "int64_t", FLOAT: "double", STR: "c10::string_view"}
_ATTR = {BOOL: "Bool()", INT: "Int()", FLOAT: "Float()", STR: "String()"}


def op_def(p: Plan) -> str:
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


def prototype(p: Plan) -> str:
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


def kernel_values(p: Plan) -> dict[str, str]:
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


def binding_values(p: Plan) -> dict[str, str]:
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
