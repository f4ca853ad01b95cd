from apex.optimizers import FusedAdam


def build(params):
    return FusedAdam(params, lr=1e-3)
