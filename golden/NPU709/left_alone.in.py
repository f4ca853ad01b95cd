# Calls whose fused kernel could differ from what they ask for are left as they are.
import torch
import torch.nn as nn
from mylib.optim import AdamW as MyAdamW

model = nn.Linear(4, 4).cuda()
params = list(model.parameters())
given = torch.optim.AdamW(params, fused=False)
chosen = torch.optim.AdamW(params, foreach=True)
differentiable = torch.optim.Adam(params, differentiable=True)
amsgrad = torch.optim.AdamW(params, amsgrad=True)
positional_amsgrad = torch.optim.Adam(params, 1e-3, (0.9, 0.999), 1e-8, 0, True)
maximize = torch.optim.SGD(params, lr=0.1, maximize=args.maximize)
capturable = torch.optim.AdamW(params, capturable=True)
decoupled = torch.optim.Adam(params, decoupled_weight_decay=True)
tensor_lr = torch.optim.AdamW(params, lr=torch.tensor(1e-3))
star = torch.optim.SGD(*optimizer_args)
not_torch = MyAdamW(params, lr=1e-3)


def from_config(params, **kwargs):
    # A **-argument whose keys are not known here.
    return torch.optim.AdamW(params, **kwargs)


def with_foreach(params, args):
    options = {"lr": args.lr, "foreach": True}
    return torch.optim.AdamW(params, **options)


def updated_elsewhere(params, args):
    options = dict(lr=args.lr)
    configure(options)
    return torch.optim.AdamW(params, **options)


def built_from_args(params, args):
    options = dict(vars(args))
    return torch.optim.AdamW(params, **options)
