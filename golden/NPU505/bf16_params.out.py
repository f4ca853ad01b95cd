import torch
try:
    # TODO(ascend-port): NPU506 [low] apex FusedAdam: use torch.optim.AdamW (adam_w_mode=True, apex's default; apex's weight_decay default is 0) or torch.optim.Adam
    from apex.optimizers import FusedAdam
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    FusedAdam = None


# bf16 parameters: apex keeps their Adam moments in fp32, torch.optim in bf16. Left with a TODO.
def build(model, lr):
    model = model.to(dtype=torch.bfloat16)
    # TODO(ascend-port): NPU506 [low] apex FusedAdam: use torch.optim.AdamW (adam_w_mode=True, apex's default; apex's weight_decay default is 0) or torch.optim.Adam, by hand: the module makes parameters fp16/bf16, whose moments apex keeps in fp32 and torch.optim in the parameter's dtype (fp16 moments underflow): keep fp32 master weights or check the moments' dtype
    return FusedAdam(model.parameters(), lr=lr)
