import torch
import torch_npu
# TODO(ascend-port): NPU506 [low] apex FusedAdam: use torch_npu.optim.NpuFusedAdamW (adam_w_mode=True, apex's default; apex's weight_decay default is 0) or NpuFusedAdam
from apex.optimizers import FusedAdam


def build(model, args):
    if args.adamw:
        return torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0)
    if args.adam:
        return torch_npu.optim.NpuFusedAdam(model.parameters(), args.lr, weight_decay=0.1)
    if args.sgd:
        return torch_npu.optim.NpuFusedSGD(model.parameters(), lr=0.1, momentum=0.9)
    return torch_npu.optim.NpuFusedAdamW(
        model.parameters(),
        lr=1e-4,
        weight_decay=0.0,
    )


OPTIMIZERS = {"adam": FusedAdam}
