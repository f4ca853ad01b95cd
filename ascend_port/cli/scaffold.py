"""`ascend-port scaffold OP [PATH]`: an Ascend C operator project for one op of a CUDA extension (NPU502)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ascend_port.cli.common import EXIT_CLEAN, EXIT_ERROR, Terminal, app

HELP = """Write an Ascend C operator project for an op of the project's CUDA extensions (the ops the cuda-extension rule reports).

No tool turns a CUDA kernel into an Ascend C kernel: scaffold writes everything around the kernel and a CPU
reference to check it against. OP is the op's name (causal_conv1d_fwd) or module.op (selective_scan_cuda.fwd);
the ops are those the project's C++ binds (PYBIND11_MODULE, TORCH_LIBRARY) in the extensions setup.py builds
(CUDAExtension) or a JIT load() builds, and their arguments are the bound C++ function's. In --out (default
ascend_ops/OP/ in the project) it writes:

OP.json: the prototype for msOpGen. op_host/: the tiling data and the OpDef registration (inputs, outputs,
attributes from the C++ arguments; InferShape, InferDataType, TilingFunc). op_kernel/OP.cpp: the kernel class
(Init, Process, CopyIn, Compute, CopyOut over TPipe/TQue, double-buffered), its Compute a TODO. torch_binding/:
TORCH_LIBRARY_IMPL(ns, PrivateUse1) calling aclnnOp through EXEC_NPU_CMD (op-plugin style). build.sh: msopgen,
the operator package and the binding, on a host with CANN. OP_npu/: a package that runs the NPU operator when
torch_npu and the build are there, else the reference. OP_npu/reference.py: the project's own pure-torch version
of the op where it ships one beside the call sites (a *_ref, *_torch, *_naive, *_fallback... function named for
the op: copied with what it uses of its module), else a NotImplementedError to write. test_OP.py: the reference
on random inputs shaped as the fallback's docstring or the C++ CHECK_SHAPE calls say, checked against the call
sites' use; the NPU operator against it where an NPU is present (skipped here, saying why).

Existing files are never replaced without --force. Exits 0 when written, 2 when OP is missing or unknown (the
ops found are listed), the files exist, or the op's C++ function cannot be read."""


@app.command("scaffold", help=HELP)
def scaffold(
    op: Annotated[str, typer.Argument(metavar="OP", help="The op: its name or module.op.", show_default=False)] = "",
    path: Annotated[Path, typer.Argument(metavar="PATH", help="The project (default: the current folder).")] = Path(
        "."
    ),
    out: Annotated[
        Path | None, typer.Option("--out", help="Where to write (default: ascend_ops/OP/ in the project).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace files that exist.")] = False,
) -> None:
    from ascend_port.scaffold.generate import write
    from ascend_port.scaffold.ops import find_ops
    from ascend_port.scaffold.plan import ScaffoldError, op_id, plan

    term = Terminal()
    if not path.is_dir():
        raise term.fail(f"{escape(str(path))}: not a folder")
    ops = find_ops(path)
    chosen = [o for o in ops if op and op in (o.name, o.qualified, op_id(o))]
    if len(chosen) != 1:
        listed = "\n".join(f"  {escape(o.qualified)}  ({escape(o.binding)})" for o in ops)
        if not ops:
            raise term.fail(
                f"{escape(str(path))}: no op of a CUDA extension found (the cuda-extension rule reports none)"
            )
        why = "give the op" if not op else (f"{escape(op)}: " + ("ambiguous" if chosen else "no such op"))
        term.err.print(f"error: {why}; the CUDA extension ops of {escape(str(path))}:\n{listed}")
        raise typer.Exit(EXIT_ERROR)
    try:
        found = plan(path, chosen[0], out)
        written = write(found, force)
    except ScaffoldError as error:
        raise term.fail(escape(str(error))) from None
    where = found.fallback
    term.out.print(f"wrote {len(written)} files for {escape(chosen[0].qualified)} in {escape(str(found.out))}")
    if where is not None:
        term.out.print(f"reference: {escape(where.name)} ({escape(where.file)}:{where.line}), the project's own")
    else:
        term.out.print("reference: a TODO (no pure-torch version found beside the call sites)")
    term.out.print(f"test here: python -m pytest {escape(str(found.out))}")
    raise typer.Exit(EXIT_CLEAN)
