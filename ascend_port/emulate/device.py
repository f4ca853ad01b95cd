"""The emulated ``npu`` device: PyTorch's PrivateUse1 backend, renamed ``npu``, over host memory.

Imported only inside the emulated process (it imports torch). ``install`` is idempotent. The native part
(``_native.SOURCE``) is compiled once per torch version and source with ``torch.utils.cpp_extension.load_inline``
and cached under the user's cache directory (``$ASCEND_PORT_CACHE_DIR`` or ``$XDG_CACHE_HOME/ascend-port`` or
``~/.cache/ascend-port``)."""

from __future__ import annotations

import atexit
import functools
import hashlib
import importlib.util
import os
import shutil
import sys
import time
import types
from pathlib import Path

import torch

DEVICES_ENV = "ASCEND_PORT_EMULATE_DEVICES"
_NATIVE_NAME = "ascend_port_npu_emulator"


class EmulatorBuildError(RuntimeError):
    pass


def cache_dir() -> Path:
    base = os.environ.get("ASCEND_PORT_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ascend-port"


def _source_module():
    here = Path(__file__).resolve().with_name("_native.py")
    spec = importlib.util.spec_from_file_location("_ascend_port_emulate_native_source", here)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_native() -> types.ModuleType:
    loaded = sys.modules.get(_NATIVE_NAME)
    if loaded is not None:
        return loaded
    source = _source_module()
    compiler = os.environ.get("CXX") or "c++"
    if shutil.which(compiler) is None and shutil.which("g++") is None:
        raise EmulatorBuildError(
            f"ascend-port emulate needs a C++ compiler to build its emulated npu device once ({compiler!r} and "
            "'g++' are not on PATH): install one (e.g. `apt-get install g++`) or set CXX"
        )
    from torch.utils import cpp_extension

    # `pip install ninja` puts it beside the interpreter, which is not on PATH unless the environment is activated.
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])
    if not cpp_extension.is_ninja_available():
        raise EmulatorBuildError(
            "ascend-port emulate needs ninja to build its emulated npu device once: `pip install ninja`"
        )
    digest = hashlib.sha256(f"{torch.__version__}\n{sys.version}\n{source.SOURCE}".encode()).hexdigest()[:16]
    build = cache_dir() / "emulate" / f"torch-{torch.__version__.replace('+', '-')}-{digest}"
    build.mkdir(parents=True, exist_ok=True)
    _clear_stale_lock(build / "lock")
    first = not (build / f"{_NATIVE_NAME}.so").exists()
    if first:  # about a minute of compiling: say what and where, once
        print(
            f"ascend-port emulate: building the emulated npu device once for torch {torch.__version__} "
            f"(about a minute; cached in {build})",
            file=sys.stderr,
            flush=True,
        )
    started = time.monotonic()
    try:
        native = cpp_extension.load_inline(
            name=_NATIVE_NAME,
            cpp_sources=[source.SOURCE],
            functions=source.FUNCTIONS,
            extra_cflags=["-O2"],
            build_directory=str(build),
            verbose=False,
        )
    except Exception as error:  # the compiler's own message is in the exception
        raise EmulatorBuildError(
            f"ascend-port emulate could not build its emulated npu device in {build}: {error}"
        ) from error
    if first:
        print(f"ascend-port emulate: built in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
    return native


STALE_LOCK_SECONDS = 600  # a build takes well under a minute


def _clear_stale_lock(lock: Path) -> None:
    """torch's build lock left by a build that was killed (Ctrl-C during the first run) makes every later build wait
    for ever: one older than any build could take is removed."""
    try:
        if time.time() - lock.stat().st_mtime > STALE_LOCK_SECONDS:
            lock.unlink()
            print(f"ascend-port emulate: removed a stale build lock ({lock})", file=sys.stderr)
    except OSError:
        pass


def device_count_from_env() -> int:
    raw = os.environ.get(DEVICES_ENV, "1")
    try:
        count = int(raw)
    except ValueError:
        raise ValueError(f"{DEVICES_ENV}={raw!r}: expected a number of devices") from None
    if not 1 <= count <= 64:
        raise ValueError(f"{DEVICES_ENV}={count}: expected 1 to 64 devices")
    return count


def install(device_module: types.ModuleType, devices: int | None = None) -> types.ModuleType:
    """Make ``npu`` a device backed by host memory, with ``device_module`` as ``torch.npu``. Returns the native
    module (device_count, current_device, set_device, cpu_alias)."""
    native = getattr(torch, "_ascend_port_emulate_native", None)
    if native is not None:
        return native
    count = devices if devices is not None else device_count_from_env()
    native = _load_native()
    if torch._C._get_privateuse1_backend_name() != "npu":
        torch.utils.rename_privateuse1_backend("npu")
    native.install(count)
    torch._register_device_module("npu", device_module)
    torch.utils.generate_methods_for_privateuse1_backend(for_storage=True, for_packed_sequence=True)
    _route_structured(native)
    _route_collectives(native)
    _fused_sgd_in_float32(native)
    _start_autograd_threads(native, count)
    # The threads' start allocated npu memory: what the program allocates is counted from here (its peak too), so
    # that a program that never puts a tensor on the npu is told it stayed on the CPU.
    native.warmup_allocations = tuple(native.memory_stats(index)[2] for index in range(count))  # type: ignore[attr-defined]
    for index in range(count):
        native.reset_peak_memory(index)
    native.reset_op_stats()  # (the run hazards, likewise: the program's ops only)
    native.python_op_calls = {}  # type: ignore[attr-defined]  # (the ops with a Python kernel here: _fused_sgd_)
    torch._ascend_port_emulate_native = native  # type: ignore[attr-defined]  # (found by the stand-in torch_npu)
    return native


def _start_autograd_threads(native: types.ModuleType, count: int) -> None:
    """Start autograd's device threads now and wait until they are ready. The first backward starts one per npu
    device, and each must take the GIL once to make its Python thread state: a program that exits right after its
    first backward can begin finalizing first, and the interpreter then ends that thread inside C++, which aborts
    the process ("terminate called without an active exception", exit code 134, after a run that succeeded).
    ``threads_seen``: the threads other than this one that have set an npu device (each device thread does, once
    its thread state is made)."""
    for index in range(count):  # a thread per device, started by the first backward on that device
        torch.ones(1, device=torch.device("npu", index), requires_grad=True).sum().backward()
    deadline = time.monotonic() + 5.0
    while native.threads_seen() < count and time.monotonic() < deadline:
        time.sleep(0.001)  # lets the threads take the GIL
    atexit.register(_settle_autograd_threads, native, count)  # (registered first: runs after the program's handlers)


_SETTLED: list[torch.Tensor] = []  # the exit's own tensors, kept alive for good (freeing them needs no GIL then)


def _settle_autograd_threads(native: types.ModuleType, count: int) -> None:
    """At exit, let each device thread drop the program's last graph before the interpreter finalizes. torch 2.13's
    backward stashes a Python object (the caller's contextvars) in the graph task's thread-local state, and the
    program's backward returns as soon as its graph has run, while the device thread may still hold the graph task:
    dropping it then takes the GIL, and a thread that takes the GIL while the interpreter finalizes is ended inside
    C++ ("terminate called without an active exception", exit code 134, after a run that succeeded: 5 of 15 short
    runs on a loaded machine). A device thread drops each graph task before it takes the next, so once a graph
    queued here has run the program's are gone; this one is run through the engine directly, with no Python object
    in its state, so dropping it needs no GIL. Its allocations are the emulator's, not the program's (the report
    written after this tells whether the program ever put a tensor on the npu)."""
    engine = torch.autograd.Variable._execution_engine  # type: ignore[attr-defined]
    # the run hazards are the program's: what it recorded, before this runs ops on every device thread
    native.op_stats_at_exit = native.op_stats()  # type: ignore[attr-defined]
    before = [native.memory_stats(index)[2] for index in range(count)]
    try:
        for _ in range(2):
            for index in range(count):
                leaf = torch.ones(1, device=torch.device("npu", index), requires_grad=True)
                root = leaf.sum()
                grad = torch.ones_like(root)
                _SETTLED.extend((leaf, root, grad))
                engine.run_backward((root,), (grad,), False, False, (), True, True)
    except Exception:  # (a device torn down by the program: nothing to settle)
        pass
    made = [native.memory_stats(index)[2] - was for index, was in enumerate(before)]
    warmup = getattr(native, "warmup_allocations", (0,) * count)
    native.warmup_allocations = tuple(w + n for w, n in zip(warmup, made))  # type: ignore[attr-defined]


def _route_structured(native: types.ModuleType) -> None:
    """ATen's structured operators give a backend without kernels (PrivateUse1) a generic kernel that makes the
    output from the shape rules and calls the ``out=`` variant, where the CPU has a kernel of the operator itself;
    some ``out=`` kernels then resize that output (mse_loss, smooth_l1_loss: a deprecation UserWarning on every
    program, an error under ``-W error``). Their CPU kernel runs instead, over CPU aliases, as every other op."""
    registered = torch._C._dispatch_get_registrations_for_dispatch_key
    generic = set(registered("CompositeExplicitAutogradNonFunctional"))
    own = set(registered("PrivateUse1"))
    names = sorted(name.split("::", 1)[1] for name in generic & set(registered("CPU")) - own)
    native.route("aten", [*names, *_CPU_KERNELS_FIRST])


# Operators whose generic kernel (CompositeExplicitAutograd) fails where a device kernel works: native_group_norm
# views its input, which a channels-last one (diffusers' attention blocks return them) cannot be viewed as
# (torch_npu has a kernel of its own). Their CPU kernel runs instead.
_CPU_KERNELS_FIRST = ("native_group_norm",)


def _route_collectives(native: types.ModuleType) -> None:
    """The c10d collectives registered for PrivateUse1 go to their CPU (gloo) kernels over CPU aliases."""
    try:
        import torch.distributed as dist
    except ImportError:
        return
    if not dist.is_available():
        return
    names = [
        name.split("::", 1)[1]
        for name in torch._C._dispatch_get_registrations_for_dispatch_key("PrivateUse1")
        if name.startswith("c10d::")
    ]
    if names:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            native.route("c10d", names)
            _reduce_scatter_from_all_reduce()


_libraries: list = []  # the torch.library registrations below live as long as the process


def _reduce_scatter_from_all_reduce() -> None:
    """Gloo's reduce-scatter gives a Work without a future (``get_future()`` raises) where HCCL's has one: on the
    emulated device, every reduce-scatter is an all-reduce of a copy of the input (gloo's, whose Work has a future)
    and the rank's slice of it, copied into the output when the all-reduce completes. The slice of an all-reduce is
    the reduce-scatter for every ReduceOp (elementwise), so the values are exact."""
    import torch.distributed as dist

    library = torch.library.Library("c10d", "IMPL")  # noqa: TOR901 (overrides the route_c10d kernels)
    library.impl("_reduce_scatter_base_", _reduce_scatter_base, "PrivateUse1")
    library.impl("reduce_scatter_", _reduce_scatter_lists, "PrivateUse1")
    library.impl("reduce_scatter_tensor_coalesced_", _reduce_scatter_coalesced, "PrivateUse1")
    _libraries.append(library)
    del dist


def _scatter_after_all_reduce(outputs, inputs, group, reduce_op, async_op, timeout):
    """All-reduce the flattened ``inputs`` (each ``group.size()`` slices along dim 0, one per rank) as one tensor;
    when it completes, copy this rank's slice of each into its output. Returns the Work, whose future gives
    ``outputs``."""
    import torch.distributed as dist

    size, rank = dist.ProcessGroup.unbox(group).size(), dist.ProcessGroup.unbox(group).rank()
    full = torch.cat([tensor.reshape(size, -1) for tensor in inputs], dim=1)
    _, work = torch.ops.c10d.allreduce_([full], group, reduce_op, None, async_op, timeout)

    def scatter(_future):
        mine = full[rank]
        start = 0
        for output in outputs:
            output.copy_(mine[start : start + output.numel()].view_as(output))
            start += output.numel()
        return outputs

    future = dist.Work.unbox(work).get_future().then(scatter)
    return torch._C._distributed_c10d._create_work_from_future(future).boxed()


def _reduce_scatter_base(output, input, process_group, reduce_op, async_op=True, timeout=-1):
    return output, _scatter_after_all_reduce([output], [input], process_group, reduce_op, async_op, timeout)


def _reduce_scatter_lists(output_tensors, input_tensors, process_group, reduce_op, async_op=True, timeout=-1):
    inputs = [torch.stack(list(per_rank)) for per_rank in input_tensors]
    work = _scatter_after_all_reduce(output_tensors, inputs, process_group, reduce_op, async_op, timeout)
    return output_tensors, work


def _reduce_scatter_coalesced(outputs, inputs, process_group, reduce_op, async_op=True, timeout=-1):
    return _scatter_after_all_reduce(outputs, inputs, process_group, reduce_op, async_op, timeout)


def _fused_sgd_in_float32(native: types.ModuleType) -> None:
    """torch's CPU ``_fused_sgd_`` (2.4 to 2.13) leaves the whole SIMD blocks of a bfloat16 or float16 parameter
    un-updated (pytorch/pytorch#191763), and the fallback would run that CPU kernel for npu tensors, where torch_npu
    registers a kernel of its own (2.7.1, 2.9.0, 2.10.0 and later). On the emulated device the CPU kernel updates
    float32 copies of a low-precision parameter, gradient and momentum buffer (right in float32), rounded once
    into them: a device kernel's opmath, as torch's CUDA kernel computes."""
    library = torch.library.Library("aten", "IMPL")  # noqa: TOR901 (overrides the fallback for these two)
    kernel = functools.partial(_fused_sgd, native)
    library.impl("_fused_sgd_", kernel, "PrivateUse1")
    library.impl("_fused_sgd_.tensor_lr", kernel, "PrivateUse1")
    _libraries.append(library)


def _fused_sgd(native, params, grads, buffers, *, lr, grad_scale=None, found_inf=None, **options) -> None:
    # (the run hazards: the native fallback records the ops it runs, and this one does not reach it)
    name = "aten::_fused_sgd_" + (".tensor_lr" if isinstance(lr, torch.Tensor) else "")
    native.python_op_calls[name] = native.python_op_calls.get(name, 0) + 1
    aliases = [[native.cpu_alias(t) for t in tensors] for tensors in (params, grads, buffers)]
    work = [[t.float() for t in tensors] for tensors in aliases]  # (float32 ones are their own copies)
    alias = native.cpu_alias
    cpu_lr = alias(lr) if isinstance(lr, torch.Tensor) else lr
    torch._fused_sgd_(
        *work,
        lr=cpu_lr,
        grad_scale=None if grad_scale is None else alias(grad_scale),
        found_inf=None if found_inf is None else alias(found_inf),
        **options,
    )
    for originals, copies in zip(aliases, work):
        for original, copy in zip(originals, copies):
            if copy is not original:
                original.copy_(copy)
