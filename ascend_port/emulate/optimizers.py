"""CPU references of torch_npu's fused optimizers (``torch_npu.optim.NpuFused*``) for the stand-in torch_npu of
``ascend-port emulate``. Imports torch: only an emulated process or a test imports this module.

Re-implemented from [OPT], torch_npu's sources, read through the search tool (Ascend/pytorch master at 9e73e708,
``torch_npu/optim/npu_fused_*.py``; ascend_port/data/torch_npu_api.json, from the 2.14.0 wheel, lists the same
classes): each class keeps torch_npu's signature and defaults (``NpuFusedAdamW`` ``weight_decay=1e-2``,
``NpuFusedSGD`` and ``NpuFusedBertAdam`` with a required ``lr``, ``NpuFusedLamb`` ``eps=1e-6``, ``NpuFusedRMSpropTF``
``alpha=0.9``), its argument checks and its update, op for op, applied per parameter instead of on flat buffers (the
updates are elementwise, or per parameter where torch_npu loops over its parameters: Lamb's trust ratio, AdamP's
projection; BertAdam's clipping is per group and dtype, as there).

[BASE] ``npu_fused_optim_base.py``: at the first ``step()`` (or ``zero_grad()`` once gradients exist) torch_npu
combines every parameter that has a gradient, and those gradients, into one flat NPU buffer per dtype, and from then
on updates the buffers. So a parameter must be on the npu device and float32 or float16 ("Fused optimizer's
parameters must be either float32 or float16"), sparse gradients are refused, ``zero_grad(set_to_none=True)`` is
refused (its default is False), and the parameters and gradient tensors must stay the ones combined: a gradient set
to None and re-created by backward (``model.zero_grad()``), a re-allocated parameter, or a parameter that gets its
first gradient later is silently left out of the update on the device. This reference raises for all of them:
:class:`OpContractError` (a ``ValueError``) or :class:`OpTypeError` (a ``TypeError``) from ops.py, naming the
optimizer and the rule. torch_npu raises RuntimeError for sparse gradients; OpContractError is not one.
"""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

import torch
from torch import Tensor
from torch.optim.optimizer import required

# The stand-in torch_npu loads ops.py by path under this name before this module, so both raise the same classes;
# the test suite imports the package module.
_ops = sys.modules.get("_ascend_port_emulate_ops") or importlib.import_module("ascend_port.emulate.ops")
OpContractError: type[Exception] = _ops.OpContractError
OpTypeError: type[Exception] = _ops.OpTypeError

__all__ = [
    "NpuFusedAdadelta",
    "NpuFusedAdam",
    "NpuFusedAdamP",
    "NpuFusedAdamW",
    "NpuFusedBertAdam",
    "NpuFusedLamb",
    "NpuFusedOptimizerBase",
    "NpuFusedRMSprop",
    "NpuFusedRMSpropTF",
    "NpuFusedSGD",
]

FUSED_DTYPES = (torch.float32, torch.float16)  # [BASE]: one flat buffer per dtype, no other dtype


def on_call(name: str) -> None:
    """Replaced by the stand-in torch_npu with its report's record_call: constructions and steps are counted."""


def on_violation(name: str, error: Exception) -> None:
    """Replaced by the stand-in torch_npu with its report's record_violation: broken contracts are counted."""


def not_emulated(name: str) -> NotImplementedError:
    """Replaced by the stand-in torch_npu with its report's not_emulated, which also counts the name."""
    return NotImplementedError(f"{name} is not emulated by ascend-port emulate")


def _fail(optimizer: str, error: Exception) -> NoReturn:
    on_violation(f"torch_npu.optim.{optimizer}", error)
    raise error


def _check(ok: object, optimizer: str, rule: str) -> None:
    if not ok:
        _fail(optimizer, OpContractError(f"{optimizer}: {rule}"))


def _zeros(p: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(p, memory_format=torch.preserve_format)


class NpuFusedOptimizerBase(torch.optim.Optimizer):
    """[BASE]: the contract of the flat buffers; subclasses give ``_update`` (one parameter) or ``_group_step``."""

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        on_call(f"torch_npu.optim.{type(self).__name__}")
        super().__init__(params, defaults)
        # id(param) -> (where, param, gradient) as combined at the first step. Holding the tensors keeps their memory
        # (as the flat buffers do on the device), so a re-created tensor cannot reuse the address.
        self._combined: dict[int, tuple[str, torch.Tensor, torch.Tensor]] | None = None

    def _live(self) -> list[tuple[str, torch.Tensor, torch.Tensor]]:
        """(where, parameter, gradient) of each parameter that has a gradient: what [BASE] combines."""
        live = []
        for g, group in enumerate(self.param_groups):
            for i, p in enumerate(group["params"]):
                if p.grad is not None:
                    live.append((f"parameter {i} of param group {g}", p, p.grad))
        return live

    def _check_combined(self) -> None:
        """Checks what [BASE] combines, and that it is still what was combined at the first step."""
        name = type(self).__name__
        live = self._live()
        for where, p, grad in live:
            _check(
                p.device.type == "npu",
                name,
                f"{where} is on {p.device}: the fused optimizers combine the parameters into flat NPU buffers, so "
                "every parameter must be on the npu device (build the optimizer after model.npu())",
            )
            if p.dtype not in FUSED_DTYPES:
                _fail(name, OpTypeError(f"{name}: {where} is {p.dtype}: parameters must be float32 or float16"))
            _check(not grad.is_sparse, name, f"{where} has a sparse gradient: sparse gradients are not supported")
        if self._combined is None:
            self._combined = {id(p): (where, p.detach(), grad) for where, p, grad in live} or None
            return
        now = {id(p): (p, grad) for _, p, grad in live}
        for key, (where, param, combined_grad) in self._combined.items():
            current = now.get(key)
            _check(
                current is not None,
                name,
                f"{where} has lost its gradient since the first step (model.zero_grad() or p.grad = None): the "
                "update would read the flat gradient buffer combined then; clear gradients with "
                "optimizer.zero_grad(), which zeroes them in place",
            )
            assert current is not None
            _check(
                current[0].data_ptr() == param.data_ptr(),
                name,
                f"{where} was re-allocated after the first step (p.data = ..., .to(), .cpu()): the update goes to "
                "the flat buffer combined then, not to the new tensor",
            )
            _check(
                current[1].data_ptr() == combined_grad.data_ptr(),
                name,
                f"{where} has a new gradient tensor since the first step (p.grad set to None or assigned, "
                "backward with create_graph=True): the update would read the stale flat gradient buffer; clear "
                "gradients with optimizer.zero_grad(), which zeroes them in place",
            )
        for where, p, _ in live:
            _check(
                id(p) in self._combined,
                name,
                f"{where} had no gradient at the first step, so it is not in the flat buffers combined then and "
                "is never updated (unfreeze parameters or add param groups before the first step)",
            )

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        on_call(f"torch_npu.optim.{type(self).__name__}.step")
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._check_combined()
        for group in self.param_groups:
            self._group_step(group)
        return loss

    def _group_step(self, group: dict[str, Any]) -> None:
        for p in group["params"]:
            if p.grad is not None:
                self._update(p, p.grad, self.state[p], group)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} has no update (as NpuFusedOptimizerBase in torch_npu)")

    @torch.no_grad()
    def zero_grad(self, set_to_none: bool = False) -> None:
        # [BASE]: set_to_none would drop the combined gradient buffers.
        _check(not set_to_none, type(self).__name__, "set_to_none is not supported in fused optimizers")
        if self._live():
            self._check_combined()
        super().zero_grad(set_to_none=False)

    @torch.no_grad()
    def clip_grad_norm_fused_(self, max_norm: float, norm_type: float = 2) -> torch.Tensor:
        """[BASE]: the total norm of the combined gradients (per dtype buffer, then over the buffers), clipped in
        place to ``max_norm``."""
        self._check_combined()
        live = self._live()
        buffers = [[grad for _, p, grad in live if p.dtype == dtype] for dtype in FUSED_DTYPES]
        buffers = [grads for grads in buffers if grads]
        if not buffers:
            return torch.tensor(0.0)
        max_norm, norm_type = float(max_norm), float(norm_type)
        if norm_type == math.inf:
            total = torch.stack([g.float().abs().max() for grads in buffers for g in grads]).max()
        else:
            sums = [torch.stack([g.float().abs().pow(norm_type).sum() for g in grads]).sum() for grads in buffers]
            total = torch.stack(sums).sum().pow(1 / norm_type)
        clip_coef = max_norm / (total + 1e-6)
        if clip_coef < 1:
            for grads in buffers:
                for g in grads:
                    g.mul_(clip_coef)
        return total

    def get_combined_params(self) -> Any:
        raise not_emulated(f"torch_npu.optim.{type(self).__name__}.get_combined_params")

    def get_combined_grads(self) -> Any:
        raise not_emulated(f"torch_npu.optim.{type(self).__name__}.get_combined_grads")


def _check_positive(name: str, values: dict[str, float]) -> None:
    """[OPT]'s ``Invalid learning rate`` / ``Invalid <name> value`` checks: each of these must be >= 0."""
    for what, value in values.items():
        _check(value >= 0.0, name, f"Invalid {what}: {value}")


def _check_betas(name: str, betas: tuple[float, float]) -> None:
    for index, beta in enumerate(betas):
        _check(0.0 <= beta < 1.0, name, f"Invalid beta parameter at index {index}: {beta}")


def _adam_moments(p: torch.Tensor, grad: torch.Tensor, state: dict[str, Any], group: dict[str, Any], amsgrad: bool):
    """The moments and bias corrections shared by [OPT] Adam, AdamW and AdamP: (exp_avg, denom, step_size)."""
    beta1, beta2 = group["betas"]
    if not state:
        state.update(step=0, exp_avg=_zeros(p), exp_avg_sq=_zeros(p))
        if amsgrad:
            state["max_exp_avg_sq"] = _zeros(p)
    state["step"] += 1
    bias_correction1 = 1 - beta1 ** state["step"]
    bias_correction2 = 1 - beta2 ** state["step"]
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    second = exp_avg_sq
    if amsgrad:
        second = torch.max(state["max_exp_avg_sq"], exp_avg_sq, out=state["max_exp_avg_sq"])
    denom = (second.sqrt() / math.sqrt(bias_correction2)).add_(group["eps"])
    return exp_avg, denom, group["lr"] / bias_correction1


def _adam_defaults(name: str, lr, betas, eps, weight_decay, amsgrad) -> dict[str, Any]:
    _check_positive(name, {"learning rate": lr, "epsilon value": eps})
    _check_betas(name, betas)
    _check_positive(name, {"weight_decay value": weight_decay})
    return dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad)


class NpuFusedAdam(NpuFusedOptimizerBase):
    """[OPT] npu_fused_adam.py: Adam with L2 weight decay (added to the gradient)."""

    def __init__(
        self, params: Iterable[Any], lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False
    ) -> None:
        super().__init__(params, _adam_defaults(type(self).__name__, lr, betas, eps, weight_decay, amsgrad))

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        exp_avg, denom, step_size = _adam_moments(p, grad, state, group, group["amsgrad"])
        p.addcdiv_(exp_avg, denom, value=-step_size)


class NpuFusedAdamW(NpuFusedOptimizerBase):
    """[OPT] npu_fused_adamw.py: Adam with decoupled weight decay, default 1e-2 ("weight decay coefficient
    (default: 1e-2)"; apex's FusedAdam defaults to 0)."""

    def __init__(
        self, params: Iterable[Any], lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False
    ) -> None:
        super().__init__(params, _adam_defaults(type(self).__name__, lr, betas, eps, weight_decay, amsgrad))

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        p.mul_(1 - group["lr"] * group["weight_decay"])
        exp_avg, denom, step_size = _adam_moments(p, grad, state, group, group["amsgrad"])
        p.addcdiv_(exp_avg, denom, value=-step_size)


class NpuFusedSGD(NpuFusedOptimizerBase):
    """[OPT] npu_fused_sgd.py: SGD with momentum, dampening, Nesterov and L2 weight decay; ``lr`` is required."""

    def __init__(
        self, params: Iterable[Any], lr=required, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False
    ) -> None:
        name = type(self).__name__
        _check(lr is required or lr >= 0.0, name, f"Invalid learning rate: {lr}")
        _check_positive(name, {"momentum value": momentum, "weight_decay value": weight_decay})
        _check(
            not nesterov or (momentum > 0 and math.isclose(dampening, 0.0, abs_tol=1e-15)),
            name,
            "Nesterov momentum requires a momentum and zero dampening",
        )
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov)
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        momentum = group["momentum"]
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:  # [OPT]: the first step takes the (weight-decayed) gradient as the buffer
                buf = state["momentum_buffer"] = torch.clone(grad).detach()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        p.add_(grad, alpha=-group["lr"])


class NpuFusedAdadelta(NpuFusedOptimizerBase):
    """[OPT] npu_fused_adadelta.py."""

    def __init__(self, params: Iterable[Any], lr=1.0, rho=0.9, eps=1e-6, weight_decay=0) -> None:
        name = type(self).__name__
        _check_positive(name, {"learning rate": lr})
        _check(0.0 <= rho <= 1.0, name, f"Invalid rho value: {rho}")
        _check_positive(name, {"epsilon value": eps, "weight_decay value": weight_decay})
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay))

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        rho, eps = group["rho"], group["eps"]
        if not state:
            state.update(step=0, square_avg=_zeros(p), acc_delta=_zeros(p))
        state["step"] += 1
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
        p.add_(delta, alpha=-group["lr"])
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)


def _rmsprop_defaults(name: str, lr, alpha, eps, weight_decay, momentum, centered) -> dict[str, Any]:
    values = {"learning rate": lr, "epsilon value": eps, "momentum value": momentum}
    _check_positive(name, {**values, "weight_decay value": weight_decay, "alpha value": alpha})
    return dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay)


def _rmsprop_state(p: torch.Tensor, state: dict[str, Any], group: dict[str, Any], square_avg: float) -> None:
    if not state:
        state.update(step=0, square_avg=torch.full_like(p, square_avg, memory_format=torch.preserve_format))
        if group["momentum"] > 0:
            state["momentum_buffer"] = _zeros(p)
        if group["centered"]:
            state["grad_avg"] = _zeros(p)
    state["step"] += 1


class NpuFusedRMSprop(NpuFusedOptimizerBase):
    """[OPT] npu_fused_rmsprop.py: PyTorch's RMSprop (epsilon added after the square root)."""

    def __init__(
        self, params: Iterable[Any], lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False
    ) -> None:
        name = type(self).__name__
        super().__init__(params, _rmsprop_defaults(name, lr, alpha, eps, weight_decay, momentum, centered))

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        alpha, eps = group["alpha"], group["eps"]
        _rmsprop_state(p, state, group, 0.0)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        square_avg = state["square_avg"].mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if group["centered"]:
            grad_avg = state["grad_avg"].mul_(alpha).add_(grad, alpha=1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_().add_(eps)
        else:
            avg = square_avg.sqrt().add_(eps)
        if group["momentum"] > 0:
            buf = state["momentum_buffer"].mul_(group["momentum"]).addcdiv_(grad, avg)
            p.add_(buf, alpha=-group["lr"])
        else:
            p.addcdiv_(grad, avg, value=-group["lr"])


class NpuFusedRMSpropTF(NpuFusedOptimizerBase):
    """[OPT] npu_fused_rmsprop_tf.py: TensorFlow's RMSprop: the squared average starts at one, epsilon goes inside
    the square root, the learning rate into the momentum buffer (``lr_in_momentum``), and ``decoupled_decay``
    shrinks the parameter by ``weight_decay`` (without the learning rate)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr=1e-2,
        alpha=0.9,
        eps=1e-10,
        weight_decay=0,
        momentum=0.0,
        centered=False,
        decoupled_decay=False,
        lr_in_momentum=True,
    ) -> None:
        defaults = _rmsprop_defaults(type(self).__name__, lr, alpha, eps, weight_decay, momentum, centered)
        defaults.update(decoupled_decay=decoupled_decay, lr_in_momentum=lr_in_momentum)
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        one_minus_alpha, eps, lr = 1.0 - group["alpha"], group["eps"], group["lr"]
        _rmsprop_state(p, state, group, 1.0)  # [OPT]: "PyTorch inits to zero"
        if group["weight_decay"] != 0:
            if group["decoupled_decay"]:
                p.add_(p, alpha=-group["weight_decay"])
            else:
                grad = grad.add(p, alpha=group["weight_decay"])
        square_avg = state["square_avg"]
        square_avg.add_(grad.pow(2) - square_avg, alpha=one_minus_alpha)
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg.add_(grad - grad_avg, alpha=one_minus_alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).add(eps).sqrt_()
        else:
            avg = square_avg.add(eps).sqrt_()
        if group["momentum"] > 0:
            buf = state["momentum_buffer"].mul_(group["momentum"])
            if group["lr_in_momentum"]:
                buf.addcdiv_(grad, avg, value=lr)
                p.sub_(buf)
            else:
                buf.addcdiv_(grad, avg)
                p.add_(buf, alpha=-lr)
        else:
            p.addcdiv_(grad, avg, value=-lr)


class NpuFusedLamb(NpuFusedOptimizerBase):
    """[OPT] npu_fused_lamb.py: LAMB without bias correction; the trust ratio is ``min(|p|, 10) / |adam step|``
    per parameter (1 where either norm is 0, or always with ``adam=True``)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-6,
        weight_decay=0,
        adam=False,
        use_global_grad_norm=False,
    ) -> None:
        name = type(self).__name__
        _check_positive(name, {"learning rate": lr})
        _check_betas(name, betas)
        _check_positive(name, {"epsilon value": eps})
        self.adam = adam
        self.use_global_grad_norm = use_global_grad_norm
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        if self.use_global_grad_norm:
            # [OPT] computes it with get_optimizer_combined_grads(), which NpuFusedOptimizerBase does not define.
            raise not_emulated("torch_npu.optim.NpuFusedLamb(use_global_grad_norm=True)")
        return super().step(closure)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        if not state:
            state.update(step=0, exp_avg=torch.zeros_like(p), exp_avg_sq=torch.zeros_like(p))
        state["step"] += 1
        exp_avg = state["exp_avg"].mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg_sq = state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        adam_step = exp_avg / exp_avg_sq.sqrt().add(group["eps"])
        if group["weight_decay"] != 0:
            adam_step.add_(p, alpha=group["weight_decay"])
        trust_ratio = torch.ones_like(p)
        if not self.adam:
            weight_norm = p.pow(2).sum().sqrt().clamp(0, 10)
            adam_norm = adam_step.pow(2).sum().sqrt()
            if weight_norm != 0 and adam_norm != 0:
                trust_ratio.fill_(weight_norm / adam_norm)
        p.addcmul_(adam_step, trust_ratio, value=-group["lr"])


def _projection(p, grad, perturb, delta: float, wd_ratio: float, eps: float):
    """[OPT] npu_fused_adamp.py: where the gradient is nearly orthogonal to a (channel-wise, then layer-wise) view
    of the weight, remove the perturbation's radial part and scale the weight decay by ``wd_ratio``."""
    expand_size = [-1] + [1] * (p.dim() - 1)
    for view in (lambda x: x.view(x.size(0), -1), lambda x: x.view(1, -1)):
        x, y = view(grad), view(p)
        cosine = (x * y).sum(dim=1).abs() / x.norm(dim=1).add_(eps) / y.norm(dim=1).add_(eps)
        if cosine.max() < delta / math.sqrt(y.size(1)):
            p_n = p / y.norm(dim=1).view(expand_size).add_(eps)
            perturb -= p_n * view(p_n * perturb).sum(dim=1).view(expand_size)
            return perturb, wd_ratio
    return perturb, 1.0


class NpuFusedAdamP(NpuFusedOptimizerBase):
    """[OPT] npu_fused_adamp.py: AdamP (Adam with the projection above, decoupled weight decay)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        delta=0.1,
        wd_ratio=0.1,
        nesterov=False,
    ) -> None:
        defaults = dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, delta=delta, wd_ratio=wd_ratio, nesterov=nesterov
        )
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        beta1 = group["betas"][0]
        exp_avg, denom, step_size = _adam_moments(p, grad, state, group, amsgrad=False)
        if group["nesterov"]:
            perturb = (beta1 * exp_avg + (1 - beta1) * grad) / denom
        else:
            perturb = exp_avg / denom
        wd_ratio = 1.0
        if p.dim() > 1:
            perturb, wd_ratio = _projection(p, grad, perturb, group["delta"], group["wd_ratio"], group["eps"])
        if group["weight_decay"] > 0:
            p.mul_(1 - group["lr"] * group["weight_decay"] * wd_ratio)
        p.add_(perturb, alpha=-step_size)


def _warmup_cosine(x, warmup=0.002):
    if x < warmup:
        return x / warmup
    return 0.5 * (1.0 + torch.cos(math.pi * x))  # as [OPT]: torch.cos of a float raises TypeError there too


def _warmup_constant(x, warmup=0.002):
    return x / warmup if x < warmup else 1.0


def _warmup_linear(x, warmup=0.002):
    return x / warmup if x < warmup else max((x - 1.0) / (warmup - 1.0), 0.0)


def _warmup_poly(x, warmup=0.002, degree=0.5):
    return x / warmup if x < warmup else (1.0 - x) ** degree


SCHEDULES = {
    "warmup_cosine": _warmup_cosine,
    "warmup_constant": _warmup_constant,
    "warmup_linear": _warmup_linear,
    "warmup_poly": _warmup_poly,
}


class NpuFusedBertAdam(NpuFusedOptimizerBase):
    """[OPT] npu_fused_bert_adam.py: BERT's Adam (no bias correction, decoupled weight decay default 0.01, a
    learning-rate schedule over ``t_total`` steps), after clipping each group's gradients of one dtype together
    to ``max_grad_norm``; ``lr`` is required."""

    def __init__(
        self,
        params: Iterable[Any],
        lr=required,
        warmup=-1,
        t_total=-1,
        schedule="warmup_linear",
        b1=0.9,
        b2=0.999,
        e=1e-6,
        weight_decay=0.01,
        max_grad_norm=1.0,
    ) -> None:
        name = type(self).__name__
        _check(lr is required or lr >= 0.0, name, f"Invalid learning rate: {lr}")
        _check(not ((warmup < 0.0 and warmup != -1) or warmup >= 1.0), name, f"Invalid warmup: {warmup}")
        _check(schedule in SCHEDULES, name, f"Invalid schedule parameter: {schedule}")
        _check(0.0 <= b1 < 1.0, name, f"Invalid b1 parameter: {b1}")
        _check(0.0 <= b2 < 1.0, name, f"Invalid b2 parameter: {b2}")
        _check(e >= 0.0, name, f"Invalid epsilon value: {e}")
        self.max_grad_norm = max_grad_norm
        defaults = dict(
            lr=lr,
            schedule=schedule,
            warmup=warmup,
            t_total=t_total,
            b1=b1,
            b2=b2,
            e=e,
            weight_decay=weight_decay,
            max_grad_norm=max_grad_norm,
        )
        super().__init__(params, defaults)

    def _group_step(self, group: dict[str, Any]) -> None:
        for dtype in FUSED_DTYPES:
            live = [(p, p.grad) for p in group["params"] if p.grad is not None and p.dtype == dtype]
            if live and self.max_grad_norm > 0:
                total_norm = torch.stack([grad.float().abs().pow(2.0).sum() for _, grad in live]).sum().pow(0.5)
                clip_coef = self.max_grad_norm / (total_norm + 1e-6)
                if clip_coef < 1.0:
                    for _, grad in live:
                        grad.mul_(clip_coef)
            for p, grad in live:
                self._update(p, grad, self.state[p], group)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        beta1, beta2 = group["b1"], group["b2"]
        if not state:
            state.update(step=0, exp_avg=_zeros(p), exp_avg_sq=_zeros(p))
        exp_avg = state["exp_avg"].mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg_sq = state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        update = exp_avg / (exp_avg_sq.sqrt() + group["e"])
        if group["weight_decay"] > 0.0:
            update += group["weight_decay"] * p
        lr = group["lr"]
        if group["t_total"] != -1:
            lr = lr * SCHEDULES[group["schedule"]](state["step"] / group["t_total"], group["warmup"])
        p.add_(-(lr * update))
        state["step"] += 1  # after the update: [OPT]'s schedule reads the step count before this one
