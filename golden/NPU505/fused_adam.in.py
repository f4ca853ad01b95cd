import torch
from apex.optimizers import FusedAdam, FusedSGD


def build(model, args):
    if args.adamw:
        return FusedAdam(model.parameters(), lr=args.lr, betas=(0.9, 0.95), bias_correction=True)
    if args.adam:
        return FusedAdam(model.parameters(), args.lr, adam_w_mode=False, weight_decay=0.1)
    if args.sgd:
        return FusedSGD(model.parameters(), lr=0.1, momentum=0.9, set_grad_none=True)
    return FusedAdam(
        model.parameters(),
        lr=1e-4,
    )


OPTIMIZERS = {"adam": FusedAdam}
