"""torch.compile under ascend-port emulate: graphs that hold npu tensors run eagerly (the faithful answer: on Ascend,
torch.compile generates NPU code through torch_npu's inductor backend, ACL graphs or torchair, whose results are the
eager ones up to rounding; inductor's CPU code generator has no ``npu`` device). Graphs on the CPU alone still go to
inductor. The dynamo backends torch_npu registers exist where the target release has them, and run eagerly too:
``npu`` (TorchAir's graph compiler, registered by torch_npu.dynamo in every release), ``npugraphs`` and
``npugraph_ex`` (from the release that has torch_npu.npu.npugraph_ex). Each distinct situation is one note in the
report."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch
from torch_npu import _inventory, _report

# torch_npu's [torch_dynamo_backends] entry points (2.14.0 wheel); the releases with torch_npu.npu.npugraph_ex
# are those that register the graph ones. "npu" (TorchAir, lazily imported) is registered by torch_npu.dynamo's
# _register_npu_backend in every covered release (read in the 2.1.0 to 2.14.0 wheels).
GRAPH_BACKENDS = ("npugraphs", "npugraph_ex")
NPU_BACKENDS = (*GRAPH_BACKENDS, "npu")
_ON_ASCEND = {
    "inductor": "on Ascend torch.compile needs torch_npu's inductor backend or torchair (torch_npu's graph mode), or "
    "runs eager",
    "npugraphs": "on Ascend it captures and replays ACL graphs (torch_npu's graph mode)",
    "npugraph_ex": "on Ascend it captures and replays ACL graphs after torch_npu's FX passes",
    "npu": "on Ascend TorchAir compiles the graph through Ascend IR (or it runs eager where torch_npu was built "
    "without TorchAir)",
}


def _note(backend: str) -> None:
    _report.record_note(f"torch.compile(backend={backend!r}) ran eagerly under the emulator: {_ON_ASCEND[backend]}")


def _holds_npu(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return value.device.type == "npu"
    if isinstance(value, torch.device):
        return value.type == "npu"
    if isinstance(value, (list, tuple)):
        return any(_holds_npu(item) for item in value)
    if isinstance(value, dict):
        return any(_holds_npu(item) for item in value.values())
    return False


def on_npu(graph_module: torch.fx.GraphModule, example_inputs: Any) -> bool:
    """Whether the graph touches the npu: an input, a parameter or buffer, a traced value or a device argument."""
    if _holds_npu(list(example_inputs)):
        return True
    if any(_holds_npu(t) for t in [*graph_module.parameters(), *graph_module.buffers()]):
        return True
    for node in graph_module.graph.nodes:
        if _holds_npu(node.meta.get("val")) or _holds_npu(node.meta.get("example_value")):
            return True
        if _holds_npu(list(node.args)) or _holds_npu(dict(node.kwargs)):
            return True
    return False


def _patch_inductor() -> None:
    """torch.compile's default backend (any ``mode=``/``options=``) is this wrapper, not a registry entry."""
    wrapper = torch._TorchCompileInductorWrapper
    if getattr(wrapper, "_ascend_port_emulated", False):
        return
    compile_fx = wrapper.__call__

    @functools.wraps(compile_fx)
    def __call__(self, model_, inputs_):
        if on_npu(model_, inputs_):
            _note("inductor")
            return model_.forward
        return compile_fx(self, model_, inputs_)

    wrapper.__call__ = __call__  # type: ignore[method-assign]
    wrapper._ascend_port_emulated = True  # type: ignore[attr-defined]


def _npu_backend(name: str) -> Callable:
    def backend(graph_module: torch.fx.GraphModule, example_inputs: Any) -> Callable:
        _note(name)
        return graph_module.forward

    backend.__name__ = name
    return backend


def has_npu_backends() -> bool:
    """torch_npu registers its dynamo backends from the release that has torch_npu.npu.npugraph_ex on."""
    return "npugraph_ex" in _inventory.inventory().get("npu_submodules", ())


def _registered_backends() -> tuple[str, ...]:
    return NPU_BACKENDS if has_npu_backends() else ("npu",)


@functools.cache
def _register_npu_backends() -> None:
    from torch._dynamo.backends.registry import _COMPILER_FNS, register_backend

    for name in _registered_backends():
        if name not in _COMPILER_FNS:
            register_backend(_npu_backend(name), name=name)


def install() -> None:
    """Patch the inductor wrapper, and torch.compile so that torch_npu's backend names resolve (registered on first
    use: importing dynamo at start would cost seconds to every program)."""
    _patch_inductor()
    if getattr(torch.compile, "_ascend_port_emulated", False):
        return
    compile_ = torch.compile

    @functools.wraps(compile_)
    def compile(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("backend") in _registered_backends():
            _register_npu_backends()
        return compile_(*args, **kwargs)

    compile._ascend_port_emulated = True  # type: ignore[attr-defined]
    torch.compile = compile  # type: ignore[assignment]


install()
