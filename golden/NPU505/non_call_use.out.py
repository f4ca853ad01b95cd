from functools import partial

# TODO(ascend-port): NPU506 [low] apex FusedAdam: use torch.optim.AdamW (adam_w_mode=True, apex's default; apex's weight_decay default is 0) or torch.optim.Adam
from apex.optimizers import FusedAdam

# Not calls: under torch.optim.AdamW they would get weight_decay=1e-2 instead of apex's 0. The import stays.
OPTIMIZERS = {"adam": FusedAdam, "sgd": None}
make_optimizer = partial(FusedAdam, lr=1e-3)
