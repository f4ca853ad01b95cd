"""CPU references of apex's fused optimizers (apex.optimizers.FusedAdam, FusedSGD), as their CUDA kernels compute:
what the NPU505 port (torch.optim) is checked against. Test code only; a module of its own so that the norm and
attention references of gpu_reference.py can change beside it.

Written from apex's sources (apex/optimizers/fused_adam.py, fused_sgd.py; csrc/multi_tensor_adam.cu,
multi_tensor_sgd_kernel.cu): FusedAdam keeps `step` per param group (`group["step"]`, what its checkpoints hold),
its moments in fp32 whatever the parameter's dtype (`torch.zeros_like(p.data).float()`), computes in fp32 and rounds
the parameter once per step; fp16, bf16 and fp32 parameters are accepted.
"""

from __future__ import annotations

import torch


class ApexFusedAdam(torch.optim.Optimizer):
    """apex.optimizers.FusedAdam. adam_w_mode=True (the default): p -= lr * (m_hat / (sqrt(v_hat) + eps) + wd * p);
    False: the gradient gets wd * p first (L2). capturable and master_weights are not in this reference."""

    def __init__(
        self,
        params,
        lr=1e-3,
        bias_correction=True,
        betas=(0.9, 0.999),
        eps=1e-8,
        adam_w_mode=True,
        weight_decay=0.0,
        amsgrad=False,
        set_grad_none=True,
        capturable=False,
        master_weights=False,
    ):
        if amsgrad:
            raise RuntimeError("FusedAdam does not support the AMSGrad variant.")
        if capturable or master_weights:
            raise NotImplementedError("capturable and master_weights are not in this reference")
        defaults = dict(lr=lr, bias_correction=bias_correction, betas=betas, eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults)
        self.adam_w_mode, self.set_grad_none = adam_w_mode, set_grad_none

    def zero_grad(self, set_to_none=None):
        super().zero_grad(set_to_none=self.set_grad_none if set_to_none is None else set_to_none)

    @torch.no_grad()
    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            live = [p for p in group["params"] if p.grad is not None]
            if not live:
                continue
            group["step"] = group.get("step", 0) + 1
            beta1, beta2 = group["betas"]
            step, lr, eps, decay = group["step"], group["lr"], group["eps"], group["weight_decay"]
            bc1, bc2 = (1 - beta1**step, 1 - beta2**step) if group["bias_correction"] else (1.0, 1.0)
            for p in live:
                if p.dtype not in (torch.float16, torch.bfloat16, torch.float32):
                    raise RuntimeError("FusedAdam only support fp16, bf16 and fp32.")
                if p.grad.is_sparse:
                    raise RuntimeError("FusedAdam does not support sparse gradients.")
                state = self.state[p]
                if not state:
                    state["exp_avg"] = torch.zeros_like(p).float()
                    state["exp_avg_sq"] = torch.zeros_like(p).float()
                m, v = state["exp_avg"], state["exp_avg_sq"]
                g, p32 = p.grad.float(), p.float()
                if not self.adam_w_mode:
                    g = g + decay * p32
                m.mul_(beta1).add_(g, alpha=1 - beta1)
                v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                update = (m / bc1) / ((v / bc2).sqrt() + eps)
                if self.adam_w_mode:
                    update = update + decay * p32
                p.copy_(p32 - lr * update)
        return loss


class ApexFusedSGD(torch.optim.Optimizer):
    """apex.optimizers.FusedSGD without amp: weight decay added to the gradient before the momentum
    (wd_after_momentum=False, the default); the momentum buffer starts as the first gradient (the kernel's "first
    run"), then buf = momentum * buf + (1 - dampening) * g; nesterov: g + momentum * buf."""

    def __init__(
        self,
        params,
        lr,
        momentum=0.0,
        dampening=0.0,
        weight_decay=0.0,
        nesterov=False,
        wd_after_momentum=False,
        materialize_master_grads=True,
        set_grad_none=False,
    ):
        if wd_after_momentum:
            raise NotImplementedError("wd_after_momentum=True is not in this reference")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov)
        super().__init__(params, defaults)
        self.set_grad_none = set_grad_none

    def zero_grad(self, set_to_none=None):
        super().zero_grad(set_to_none=self.set_grad_none if set_to_none is None else set_to_none)

    @torch.no_grad()
    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            momentum = group["momentum"]
            for p in (p for p in group["params"] if p.grad is not None):
                g = p.grad.float() + group["weight_decay"] * p.float()
                if momentum != 0:
                    state = self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = g.clone()
                    else:
                        state["momentum_buffer"].mul_(momentum).add_(g, alpha=1 - group["dampening"])
                    buf = state["momentum_buffer"]
                    g = g + momentum * buf if group["nesterov"] else buf
                p.copy_(p.float() - group["lr"] * g)
        return loss
