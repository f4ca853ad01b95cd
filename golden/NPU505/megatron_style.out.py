from functools import partial

import torch
import torch_npu
try:
    # TODO(ascend-port): NPU506 [low] apex FusedAdam: use torch.optim.AdamW (adam_w_mode=True, apex's default; apex's weight_decay default is 0) or torch.optim.Adam
    from apex.optimizers import FusedAdam as Adam
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    Adam = None


# Megatron's call: adam_w_mode and capturable come from the config, which torch.optim does not take.
def get_optimizer(config, param_groups):
    # TODO(ascend-port): NPU506 [low] apex FusedAdam: use torch.optim.AdamW (adam_w_mode=True, apex's default; apex's weight_decay default is 0) or torch.optim.Adam, by hand: this call has adam_w_mode is not a literal
    return Adam(
        param_groups,
        lr=config.lr,
        weight_decay=config.weight_decay,
        betas=(config.adam_beta1, config.adam_beta2),
        eps=config.adam_eps,
        adam_w_mode=config.decoupled_weight_decay,
        capturable=config.optimizer_cpu_offload,
    )


# This one maps, and is rewritten; the import stays apex's, since the others still use it.
plain = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.0, fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
