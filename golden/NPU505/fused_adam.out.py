import torch
import torch_npu
# TODO(ascend-port): NPU506 [low] apex FusedAdam: use torch.optim.AdamW (adam_w_mode=True, apex's default; apex's weight_decay default is 0) or torch.optim.Adam
from apex.optimizers import FusedAdam


def build(model, args):
    if args.adamw:
        return torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0, fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
    if args.adam:
        return torch.optim.Adam(model.parameters(), args.lr, weight_decay=0.1, fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
    if args.sgd:
        return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
    return torch.optim.AdamW(
        model.parameters(),
        lr=1e-4,
        weight_decay=0.0,
        fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None,
    )


OPTIMIZERS = {"adam": FusedAdam}
