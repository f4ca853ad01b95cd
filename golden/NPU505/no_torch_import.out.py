try:
    # TODO(ascend-port): NPU506 [low] apex FusedAdam: use torch.optim.AdamW (adam_w_mode=True, apex's default; apex's weight_decay default is 0) or torch.optim.Adam
    from apex.optimizers import FusedAdam
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    FusedAdam = None


def build(params):
    # TODO(ascend-port): NPU506 [low] apex FusedAdam: use torch.optim.AdamW (adam_w_mode=True, apex's default; apex's weight_decay default is 0) or torch.optim.Adam, by hand: the module does not import torch
    return FusedAdam(params, lr=1e-3)
