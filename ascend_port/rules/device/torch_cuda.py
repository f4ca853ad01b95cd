"""NPU101, NPU102, NPU106, NPU107, NPU109, NPU110: `.cuda()` and `.is_cuda` of tensors and modules, `torch.cuda.*`
(renamed where the target release has it, a TODO where not) and its imports, and the TF32 switches (HF32 on an
NPU)."""

from __future__ import annotations

import re

import libcst as cst

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.device_facts import AVAILABILITY, PROBE_NAMES
from ascend_port.python.names import build_dotted, dotted
from ascend_port.rules.device.base import _code, switches_cuda_only_feature
from ascend_port.rules.device.guards import CAPABILITY_TODO, DEVICE_CAPABILITY, GuardRules

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW


CUDA_METHOD = rule(
    "NPU101",
    "cuda-method",
    HIGH,
    "`.cuda(...)` -> `.npu(...)` on tensors and modules, with the same arguments.",
    """
    `Tensor.npu` and `Module.npu` take the same arguments as `.cuda` (`device`, `non_blocking`, `memory_format`).
    Only calls are rewritten: an attribute that merely reads `.cuda` (`cfg.cuda`) is user data and stays. So does
    the `.cuda()` of an object of a CUDA-only library's class (NPU504's table: `bnb.nn.Params4bit(...)`, or what the
    function assigned one to before): it quantizes or runs the library's CUDA code, which the NPU does not have,
    and the library's TODO says so.

    Before:
        model.cuda(local_rank)
        batch = batch.cuda(non_blocking=True)
    After:
        model.npu(local_rank)
        batch = batch.npu(non_blocking=True)
    Stays (a method of another object, with arguments Tensor.cuda does not take):
        def fetch(store, key):
            return store.cuda(key, meta=True)
    """,
)


IS_CUDA = rule(
    "NPU102",
    "is-cuda",
    HIGH,
    "`tensor.is_cuda` -> `tensor.is_npu`.",
    """
    Reads of `.is_cuda` become `.is_npu`. Assignments to an attribute called `is_cuda` are user code and stay, and
    so does a test that chooses a CUDA-only feature (a TileLang or Triton kernel, FP8, ...: the code of its `if` or
    its statement names one, as NPU105 reads a device comparison): ported, it would send NPU tensors into the CUDA
    kernel; kept, the NPU takes the fallback. A guard with no fallback (`assert x.is_cuda, "Triton kernel requires
    CUDA tensors"`, `if not x.is_cuda: raise ...`) is ported all the same: kept, it would fail on the NPU, where
    Triton-Ascend runs the kernel.

    Before:
        assert x.is_cuda
    After:
        assert x.is_npu
    Stays (the test chooses a CUDA-only TileLang kernel: the NPU takes the torch fallback):
        def op(x):
            if x.is_cuda and HAS_TILELANG:
                return tilelang_op(x)
            return torch_op(x)
    """,
)


TORCH_CUDA_API = rule(
    "NPU106",
    "torch-cuda-api",
    HIGH,
    "`torch.cuda.X` -> `torch.npu.X` for every X in torch_npu's public `torch.npu` API (all import styles).",
    """
    The list of names is torch_npu 2.14.0's `torch.npu.__all__` and its public submodules, shipped as package data.
    `import torch.cuda as tc`, `from torch import cuda` and `from torch.cuda import synchronize` are rewritten
    with their uses; `import torch.cuda.amp as amp` becomes `from torch.npu import amp` (torch_npu registers the
    module `torch.npu`, not its submodules). A function whose name asks about CUDA (`is_cuda_available`, `has_cuda`,
    `get_cuda_capability`) keeps answering for CUDA: nothing in it is ported; an op builder's `is_compatible` keeps
    its `torch.cuda.is_available()`; and capability probes used as guards are NPU108's. The dotted target of a
    mock (`mock.patch("pkg.utils.torch.cuda.device_count")`, `mocker.patch`, `monkeypatch.setattr("...")`) names
    `torch.npu` with the code it patches.

    Before:
        import torch
        torch.cuda.synchronize()
        from torch.cuda import amp
    After:
        import torch
        torch.npu.synchronize()
        from torch.npu import amp
    Stays (another accelerator's module):
        import torch
        if torch.xpu.is_available():
            torch.xpu.synchronize()
    """,
)


TORCH_CUDA_UNSUPPORTED = rule(
    "NPU107",
    "torch-cuda-unsupported",
    LOW,
    "`torch.cuda.X` with no `torch.npu` counterpart: left unchanged, with a TODO naming the gap.",
    """
    Names such as `torch.cuda.memory_usage`, `torch.cuda.comm` or `torch.cuda.jiterator` do not exist in
    torch_npu. The code is not changed; a TODO comment marks it for a manual port. The same holds for
    `torch.backends.cuda`'s attention-kernel switches (`sdp_kernel`, `enable_flash_sdp`, ...), which torch_npu
    does not support, and for a `torch.cuda.ExternalStream(handle)` or `torch.cuda.Stream(stream_ptr=handle)`:
    the handle is a CUDA stream another library made (NVSHMEM, cuda.core, CuPy, ...; the TODO names those the
    module imports), which a torch.npu stream cannot wrap.

    Before:
        import torch
        used = torch.cuda.memory_usage()
    After:
        import torch
        # TODO(ascend-port): NPU107 [low] torch.cuda.memory_usage has no torch.npu counterpart (torch_npu 2.14.0): port by hand
        used = torch.cuda.memory_usage()
    """,
)


MATMUL_TF32 = rule(
    "NPU109",
    "matmul-allow-tf32",
    HIGH,
    "`torch.backends.cuda.matmul.allow_tf32` -> `torch.npu.matmul.allow_hf32`.",
    """
    HF32 is Ascend's analogue of TF32 for matrix multiplication (default False on NPU, as TF32 on recent torch).

    Before:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = True
    After:
        import torch
        torch.npu.matmul.allow_hf32 = True
    """,
)


CONV_TF32 = rule(
    "NPU110",
    "cudnn-allow-tf32",
    HIGH,
    "`torch.backends.cudnn.allow_tf32` -> `torch.npu.conv.allow_hf32`.",
    """
    HF32 for convolutions (default True on NPU, as cuDNN's TF32 default).

    Before:
        import torch
        torch.backends.cudnn.allow_tf32 = True
    After:
        import torch
        torch.npu.conv.allow_hf32 = True
    """,
)


TORCH_CUDA_METHODS = {"torch.Tensor.cuda", "torch.nn.Module.cuda"}


# `torch.cuda.X` names whose port belongs to other rules (NPU700 NVTX -> mstx, NPU701 CUDA graphs, in compile.py):
# this module neither renames nor flags them.
OWNED_ELSEWHERE = {
    "nvtx",
    "CUDAGraph",
    "graph",
    "make_graphed_callables",
    "graph_pool_handle",
    "is_current_stream_capturing",
}


# torch.backends.cuda's scaled-dot-product-attention kernel switches: unsupported by torch_npu (NPU107's TODO).
SDP_SWITCHES = {
    f"torch.backends.cuda.{name}"
    for name in (
        "sdp_kernel",
        "enable_flash_sdp",
        "enable_mem_efficient_sdp",
        "enable_math_sdp",
        "enable_cudnn_sdp",
        "flash_sdp_enabled",
        "mem_efficient_sdp_enabled",
        "math_sdp_enabled",
        "cudnn_sdp_enabled",
    )
}


# The libraries a CUDA stream handle comes from, with what the NPU has instead where it is more than torch.npu's
# streams (NPU107's TODO on a `torch.cuda.ExternalStream` of such a handle): looked for in the module's imports and
# the call's code (`ExternalStream(nvshmem_stream_ptr)`).
STREAM_LIBRARIES = (
    ("nvshmem", "NVSHMEM", "; NVSHMEM's Ascend counterpart is SHMEM, on ACL streams"),
    (r"cuda\.core", "cuda.core", ""),
    (r"cuda\.(?:bindings|cudart|cuda)\b|from[ \t]+cuda[ \t]+import", "cuda-python", ""),
    ("cupy", "CuPy", ""),
    ("pycuda", "PyCUDA", ""),
    (r"numba\.cuda", "numba.cuda", ""),
    (r"(?<![\w.])warp\b", "NVIDIA Warp", ""),
)
_IMPORT_LINE = re.compile(r"^[ \t]*(?:import|from)[ \t][^\n]*", re.MULTILINE)


def _external_stream_todo(name: str, imports: str, call: str, kept: str = "it stays on torch.cuda") -> str:
    """NPU107's TODO on ``torch.cuda.<name>(...)`` wrapping a foreign handle: it stays CUDA's, as the handle is one
    (a torch.npu stream of a CUDA handle is no NPU stream), with the libraries that may have made it."""
    found = [
        (library, more) for pattern, library, more in STREAM_LIBRARIES if re.search(pattern, call + "\n" + imports)
    ]
    libraries = f" ({', '.join(library for library, _ in found)}: CUDA-only)" if found else ""
    return (
        f"torch.cuda.{name} wraps a CUDA stream handle{libraries}: {kept}, and the code that uses the "
        "stream must be ported with it; on Ascend make the stream with torch.npu.Stream(), or wrap an ACL stream "
        "(acl.rt.create_stream) in torch.npu.ExternalStream" + "".join(more for _, more in found)
    )


def _fails_without_cuda(statement: cst.CSTNode | None) -> bool:
    """Is ``statement`` a guard with no fallback (`assert x.is_cuda, "Triton kernel requires CUDA tensors"`, `if not
    x.is_cuda: raise ...`)? Its `.is_cuda` is ported even where it names a CUDA-only feature: kept, it would fail on
    the NPU, where Triton-Ascend runs the Triton kernel it guards."""
    if isinstance(statement, cst.SimpleStatementLine):
        return any(isinstance(small, cst.Assert) for small in statement.body)
    if isinstance(statement, cst.If) and isinstance(statement.body, cst.IndentedBlock):
        lines = statement.body.body
        return all(isinstance(line, cst.SimpleStatementLine) and isinstance(line.body[0], cst.Raise) for line in lines)
    return False


def _since(name: str) -> str:
    """``; in torch_npu 2.7.1.post11-2.14.0`` for a torch.npu name that other releases than the target have."""
    return f"; {npu_api.availability(f'torch.npu.{name}')}" if npu_api.first_release(name) else ""


class TorchCudaRules(GuardRules):
    """NPU106, NPU107, NPU109, NPU110 (and NPU101, NPU102 on attributes): ``torch.cuda`` and its names, imports
    and TF32 switches."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._foreign_streams: dict[int, str] = {}  # `torch.cuda.ExternalStream` called on a handle: NPU107's TODO
        self._mock_targets: set[int] = set()  # the target strings of mock.patch / monkeypatch.setattr calls

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        qualified = self.ctx.imports.resolve(node.func)
        if _patches(node, qualified) and node.args and isinstance(node.args[0].value, cst.SimpleString):
            self._mock_targets.add(id(node.args[0].value))
        # (`Stream(stream_ptr=...)` is what ExternalStream does; `Stream(stream_id=...)` rebuilds one of torch's own)
        if qualified == "torch.cuda.ExternalStream" or (
            qualified == "torch.cuda.Stream" and any(a.keyword and a.keyword.value == "stream_ptr" for a in node.args)
        ):
            imports = "\n".join(_IMPORT_LINE.findall(self.ctx.source or ""))
            name = qualified.rsplit(".", 1)[1]
            if isinstance(node.func, cst.Attribute):  # (the attribute stays: _torch_cuda_attribute)
                self._foreign_streams[id(node.func)] = _external_stream_todo(name, imports, _code(node))
            else:  # `from torch.cuda import ExternalStream`: that import is renamed with the module's others
                kept = f"import {name} from torch.cuda again (the port renamed that import)"
                self.todo(TORCH_CUDA_UNSUPPORTED, node, _external_stream_todo(name, imports, _code(node), kept))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if self._in_import or self.ctx.claimed_by(original) is not None:
            return updated  # claimed: a later rule rewrites the whole construct (NPU304's bf16 checks)
        if self._keep_depth or id(original) in self._kept_attributes:
            return updated  # a CUDA guard, kept as it is (NPU108)
        qualified = self.ctx.imports.resolve(original)
        torch = self.ctx.torch_name()
        if qualified == "torch.backends.cuda.matmul.allow_tf32":
            return (
                self.fix(
                    MATMUL_TF32,
                    original,
                    build_dotted(f"{torch}.npu.matmul.allow_hf32"),
                    "torch.backends.cuda.matmul.allow_tf32 -> torch.npu.matmul.allow_hf32",
                )
                or updated
            )
        if qualified in SDP_SWITCHES and id(original) not in self._attribute_bases:
            self.todo(
                TORCH_CUDA_UNSUPPORTED,
                original,
                f"{qualified} has no effect on NPU (torch_npu does not support it): drop it, or select the math "
                "kernel with torch.nn.attention.sdpa_kernel and torch_npu.npu.use_compatible_impl(True)",
            )
            return updated
        if qualified == "torch.backends.cudnn.allow_tf32":
            return (
                self.fix(
                    CONV_TF32,
                    original,
                    build_dotted(f"{torch}.npu.conv.allow_hf32"),
                    "torch.backends.cudnn.allow_tf32 -> torch.npu.conv.allow_hf32",
                )
                or updated
            )
        if qualified in TORCH_CUDA_METHODS:
            return (
                self.fix(
                    CUDA_METHOD,
                    original,
                    updated.with_changes(attr=cst.Name("npu")),
                    f"{qualified} -> {qualified[:-4]}npu",
                )
                or updated
            )
        if original.attr.value == "is_cuda" and id(original) not in self._store_targets:
            statement = self._statements[-1] if self._statements else None
            if not _fails_without_cuda(statement) and switches_cuda_only_feature(original, statement):
                return updated  # `if x.is_cuda and HAS_TILELANG:`: ported, it would send NPU tensors to a CUDA kernel
            return (
                self.fix(IS_CUDA, original, updated.with_changes(attr=cst.Name("is_npu")), ".is_cuda -> .is_npu")
                or updated
            )
        if qualified and qualified.startswith("torch.cuda"):
            return self._torch_cuda_attribute(original, updated, qualified)
        return updated

    def _torch_cuda_attribute(self, original: cst.Attribute, updated: cst.Attribute, qualified: str):
        parts = qualified.split(".")
        if len(parts) == 2:
            if id(original) in self._attribute_bases:
                return updated  # the enclosing `torch.cuda.X` decides
            return (
                self.fix(
                    TORCH_CUDA_API, original, updated.with_changes(attr=cst.Name("npu")), "torch.cuda -> torch.npu"
                )
                or updated
            )
        if len(parts) != 3:
            return updated
        name = parts[2]
        if name in OWNED_ELSEWHERE:
            return updated
        if id(original) in self._foreign_streams:
            self.todo(TORCH_CUDA_UNSUPPORTED, original, self._foreign_streams[id(original)])
            return updated
        if name in AVAILABILITY and self._answers_for_cuda(original):
            return updated  # `def is_cuda_available(): return torch.cuda.is_available()` keeps answering for CUDA
        member = self._members.get(id(original))
        if member and npu_api.name_status(f"torch.npu.{name}.{member}", self.api.version) is False:
            # `torch.cuda.Stream.priority_range()`: the class is there, the member is not; a rename would only
            # move the failure (NPU190 would flag it), so the code stays with a TODO saying what is missing.
            self.todo(
                TORCH_CUDA_UNSUPPORTED,
                original,
                f"torch.cuda.{name}.{member} has no torch.npu counterpart (torch_npu {self.api.version}; "
                f"{npu_api.availability(f'torch.npu.{name}.{member}')}): port by hand",
            )
            return updated
        if not self.api.has(name):
            self.todo(
                TORCH_CUDA_UNSUPPORTED,
                original,
                f"torch.cuda.{name} has no torch.npu counterpart (torch_npu {self.api.version}{_since(name)}): port by "
                "hand",
            )
            return updated
        if name == "get_device_capability" and id(original) not in self._probe_functions:
            self.todo(DEVICE_CAPABILITY, original, CAPABILITY_TODO)  # (a call's TODO is visit_Call's)
        base = original.value
        if isinstance(base, cst.Attribute) and base.attr.value == "cuda":
            # Spelled through the torch module (`torch.cuda.X`, `th.cuda.X`): rename the `cuda` link.
            new_base = updated.value.with_changes(attr=cst.Name("npu"))
            return (
                self.fix(
                    TORCH_CUDA_API,
                    original,
                    updated.with_changes(value=new_base),
                    f"torch.cuda.{name} -> torch.npu.{name}",
                )
                or updated
            )
        return updated  # through an alias (`tc.X`, `cuda.X`): the import and the name are rewritten instead

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        """`mock.patch("pkg.utils.torch.cuda.device_count")`: the code it patches is ported to torch.npu, so is the
        target (else the mock no longer reaches it: litgpt's test_parse_devices)."""
        value = original.value
        if id(value) not in self._mock_targets or not isinstance(value, cst.SimpleString):
            return updated
        target = value.evaluated_value
        found = _MOCKED_TORCH_CUDA.search(target) if isinstance(target, str) else None
        if found is None or found["name"] in OWNED_ELSEWHERE or not self.api.has(found["name"]):
            return updated
        new = value.with_changes(value=value.value.replace("torch.cuda.", "torch.npu.", 1))
        message = f"mock target torch.cuda.{found['name']} -> torch.npu.{found['name']} (what it patches is ported)"
        return self.fix(TORCH_CUDA_API, original, updated.with_changes(value=new), message) or updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if self._rename_cuda_name and original.value == "cuda" and id(original) in self._attribute_bases:
            return self.fix(TORCH_CUDA_API, original, updated.with_changes(value="npu"), "cuda -> npu") or updated
        return updated

    # --- imports ------------------------------------------------------------------------------------------------

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.BaseSmallStatement:
        self._in_import = False
        if (submodule := self._cuda_submodule_alias(original, updated)) is not None:
            return submodule
        names = []
        changed = False
        for alias in updated.names:
            module = dotted(alias.name)
            if module and (module == "torch.cuda" or module.startswith("torch.cuda.")):
                rest = module[len("torch.cuda.") :]
                if not rest or self.api.has_path(rest):
                    new_alias = alias.with_changes(name=build_dotted("torch.npu" + module[len("torch.cuda") :]))
                    if alias.asname and isinstance(alias.asname.name, cst.Name) and alias.asname.name.value == "cuda":
                        new_alias = new_alias.with_changes(asname=alias.asname.with_changes(name=cst.Name("npu")))
                    alias, changed = new_alias, True
            names.append(alias)
        if not changed:
            return updated
        return (
            self.fix(TORCH_CUDA_API, original, updated.with_changes(names=names), "import torch.cuda -> torch.npu")
            or updated
        )

    def _cuda_submodule_alias(self, original: cst.Import, updated: cst.Import) -> cst.ImportFrom | None:
        """`import torch.cuda.amp as amp` -> `from torch.npu import amp`: torch_npu registers `torch.npu` as a
        module, not its submodules; `import torch.npu.amp` would load a second copy of torch_npu's amp package."""
        (alias, *rest) = updated.names
        module = dotted(alias.name) or ""
        if rest or alias.asname is None or not module.startswith("torch.cuda.") or module.count(".") != 2:
            return None
        name = module.rsplit(".", 1)[1]
        if not self.api.has_path(name) or not isinstance(alias.asname.name, cst.Name):
            return None
        asname = None if alias.asname.name.value == name else alias.asname
        new = cst.ImportFrom(
            module=cst.Attribute(cst.Name("torch"), cst.Name("npu")),
            names=[cst.ImportAlias(name=cst.Name(name), asname=asname)],
        )
        return self.fix(TORCH_CUDA_API, original, new, f"import {module} as ... -> from torch.npu import {name}")

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        self._in_import = False
        module = dotted(updated.module) if updated.module and not updated.relative else None
        if module is None or isinstance(updated.names, cst.ImportStar):
            return updated
        imported = [alias.name.value for alias in updated.names if isinstance(alias.name, cst.Name)]
        if module == "torch" and "cuda" in imported:
            names = [
                alias.with_changes(name=cst.Name("npu")) if alias.name.value == "cuda" else alias
                for alias in updated.names
            ]
            return (
                self.fix(TORCH_CUDA_API, original, updated.with_changes(names=names), "from torch import cuda -> npu")
                or updated
            )
        for name in imported:
            if f"{module}.{name}" in SDP_SWITCHES:
                self.todo(
                    TORCH_CUDA_UNSUPPORTED,
                    original,
                    f"{module}.{name} has no effect on NPU (torch_npu does not support it): drop its uses",
                )
        if module != "torch.cuda" and not module.startswith("torch.cuda."):
            return updated
        return self._from_torch_cuda_import(original, updated, module, imported)

    def _from_torch_cuda_import(
        self, original: cst.ImportFrom, updated: cst.ImportFrom, module: str, imported: list[str]
    ) -> cst.ImportFrom:
        """`from torch.cuda[.sub] import names` -> `from torch.npu[.sub] import names`, when torch.npu has them all;
        otherwise the import stays with a TODO naming what is missing (a partial rename would break the rest).
        Imports of what other rules own (NVTX, CUDA graphs) are theirs: left alone."""
        sub = module[len("torch.cuda.") :]
        if sub.split(".")[0] in OWNED_ELSEWHERE or (not sub and OWNED_ELSEWHERE.intersection(imported)):
            return updated
        facts = self._facts() if not sub and PROBE_NAMES.intersection(imported) else None
        guards = [n for n in imported if facts is not None and facts.guarded(f"torch.cuda.{n}")]
        if guards:
            self.todo(
                DEVICE_CAPABILITY,
                original,
                f"{', '.join(guards)} stays imported from torch.cuda for this module's CUDA capability checks "
                "(torch.npu's returns None or lacks .major/.minor): test the feature instead",
            )
            return updated
        missing = [n for n in imported if not self.api.has_path(f"{sub}.{n}" if sub else n)]
        if missing:
            names = missing[0] if len(missing) == 1 else "{" + ", ".join(missing) + "}"
            self.todo(
                TORCH_CUDA_UNSUPPORTED,
                original,
                f"{module}.{names} has no torch.npu counterpart (torch_npu {self.api.version}): port by hand",
            )
            return updated
        new_module = build_dotted("torch.npu" + module[len("torch.cuda") :])
        return (
            self.fix(
                TORCH_CUDA_API,
                original,
                updated.with_changes(module=new_module),
                f"from {module} import ... -> from torch.npu{module[len('torch.cuda') :]}",
            )
            or updated
        )


# `torch.cuda.<name>` at the end of a dotted target string, the module path before it any (`pkg.utils.torch.cuda.X`)
_MOCKED_TORCH_CUDA = re.compile(r"(?:^|\.)torch\.cuda\.(?P<name>\w+)$")
_PATCHERS = frozenset({"unittest.mock.patch", "mock.patch", "pytest.MonkeyPatch.setattr"})


def _patches(call: cst.Call, qualified: str | None) -> bool:
    """Is ``call`` a patch by a dotted target string: `mock.patch("...")`, `patch("...")` (unittest.mock's, or the
    `mock` package's), `mocker.patch("...")` (pytest-mock), `monkeypatch.setattr("...", value)`?"""
    if qualified in _PATCHERS:
        return True
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and (func.value.value, func.attr.value) in (("mocker", "patch"), ("monkeypatch", "setattr"))
    )
