from functools import partial

from apex.optimizers import FusedAdam

# Not calls: under torch.optim.AdamW they would get weight_decay=1e-2 instead of apex's 0. The import stays.
OPTIMIZERS = {"adam": FusedAdam, "sgd": None}
make_optimizer = partial(FusedAdam, lr=1e-3)
