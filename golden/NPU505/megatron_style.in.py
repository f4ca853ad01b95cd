from functools import partial

import torch
from apex.optimizers import FusedAdam as Adam


# Megatron's call: adam_w_mode and capturable come from the config, which torch.optim does not take.
def get_optimizer(config, param_groups):
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
plain = Adam(params, lr=1e-3)
