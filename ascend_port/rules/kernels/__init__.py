"""NPU500-NPU502, NPU507: custom kernels. Triton kernels, Triton's libdevice and device, and C++/CUDA extensions
built by torch.

No tool translates a GPU kernel into an NPU kernel, so most of this domain only says where the manual work is and
what the way forward is. A kernel's code is never changed here: a TODO goes above the decorators of a kernel that is
work, and one on each of its lines that needs a change. The changes that are mechanical on Triton-Ascend (where
libdevice lives, how launch code finds the device) are made outside kernels; rules/triton_kernels.py makes those
inside kernels.

These rules run as one transformer, built in layers, one module each, every layer a subclass of the one below (each
hook is defined in one layer; a layer may use the ones below it), beside the tables and facts they read:

- ``tables.py``: Triton's names (decorators, forks, libdevice modules and functions; rules/triton_kernels.py uses
  them too);
- ``arguments.py``: a call's arguments and string literals;
- ``extension_facts.py``: what NPU502 reads of a module (extension names, Python op namespaces, call sites);
- ``kernel_facts.py``: what NPU500 reads of a module and of each kernel before its lines;
- ``base.py``: the state of every layer and its bookkeeping;
- ``libdevice.py``: NPU501, the libdevice import;
- ``kernel_todos.py``: NPU500, a Triton kernel's TODOs;
- ``extensions.py``: NPU502, NPU507, C++/CUDA extensions and Triton's active device (the calls hook)."""

from __future__ import annotations

from ascend_port.python.scopes import Trigger
from ascend_port.python.transformer import ALL_OTHERS
from ascend_port.rules.kernels.extension_facts import BUILTIN_OP_NAMESPACES, extension_call_sites
from ascend_port.rules.kernels.extensions import CUDA_EXTENSION, TRITON_ACTIVE_DEVICE, ExtensionRules
from ascend_port.rules.kernels.kernel_todos import TRITON_KERNEL
from ascend_port.rules.kernels.libdevice import TRITON_LIBDEVICE


class KernelTransformer(ExtensionRules):
    """NPU500-NPU502, NPU507: Triton kernels, Triton's libdevice import and device, and torch's C++/CUDA extension
    builders."""

    # It turns some import statements into try statements, which ends the others' handling of that node.
    RUNS_AFTER = (ALL_OTHERS,)

    # The last trigger matches on the `try:` line of a try statement that already imports Triton-Ascend's libdevice,
    # so that the whole try statement is parsed (the import inside it is then left alone, see visit_Try).
    # (Triton's names and torch's extension builders are reached through an import that names `triton` or
    # `cpp_extension`: a module without that text has none of them)
    TRIGGERS = (
        r"triton",
        r"cpp_extension",
        Trigger(
            r"@[ \t]*jit\b|\bjit\(|\bautotune\b|\bheuristics\b|libdevice|get_active_torch_device", also=("triton",)
        ),
        Trigger(
            r"CUDAExtension|BuildExtension|load_inline|extra_cuda_cflags|cuda_sources|with_cuda|\.cuh?[\"']",
            also=("cpp_extension",),
        ),
        r"try:[ \t]*(?:#[^\n]*)?\r?\n[ \t]*(?:from|import)[ \t]+triton\.language\.extra\.(?:cann|ascend)",
        # the call sites of CUDA extension ops through a custom op namespace, not torch's own or another library's
        # (and through a JIT build's result or an import: option_triggers)
        r"torch\.ops\.(?!(?:" + "|".join(sorted(BUILTIN_OP_NAMESPACES)) + r")\.)\w+\.",
    )
    RULES = (TRITON_KERNEL, TRITON_LIBDEVICE, CUDA_EXTENSION, TRITON_ACTIVE_DEVICE)
    DEVICE_NEUTRAL = frozenset({TRITON_LIBDEVICE})  # (CUDA's libdevice stays the last fallback of its import)
    # (read by port/python.py beside TRIGGERS: triggers that depend on the module's imports and the port options)
    option_triggers = staticmethod(extension_call_sites)
