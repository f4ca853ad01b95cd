import torch
import torch_npu
from torch import optim
from torch.optim import SGD, AdamW

model = torch.nn.Linear(4, 4).npu()
adamw = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05, fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
adam = optim.Adam(
    model.parameters(),
    lr=1e-3,
    betas=(0.9, 0.95),
    fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None,
)
sgd = SGD(model.parameters(), 0.1, 0.9, nesterov=True, fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
# amsgrad and maximize as a literal False are torch's defaults: the fused kernel takes them.
plain = AdamW(model.parameters(), 3e-4, (0.9, 0.999), 1e-8, 0.01, False, maximize=False, fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
# A comment on the last argument stays on its line: fused= goes before it.
commented = AdamW(
    model.parameters(),
    fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None,
    lr=1e-3,  # the paper's
)


def build(model, args):
    # A **-argument built here from literal keys, none of which the fused kernel cannot take.
    opt_kwargs = dict(lr=args.lr, weight_decay=args.wd)
    opt_kwargs["betas"] = (0.9, 0.95)
    opt_kwargs.update({"eps": 1e-6})
    opt_kwargs.pop("momentum", None)
    print(opt_kwargs.get("lr"))
    return torch.optim.AdamW(model.parameters(), **opt_kwargs, fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
