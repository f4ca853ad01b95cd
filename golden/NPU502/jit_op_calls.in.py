import torch
from torch.utils.cpp_extension import load as jit_load

fused = jit_load("fused", ["fused.cpp"], with_cuda=True)
host = jit_load("host", ["host.cpp"])
gathered = (
    jit_load("gather", sources=["gather.cpp", "gather_kernel.cu"])
)


def forward(model, x, path):
    model.load_state_dict(torch.load(path))
    y = fused.scale(x, 2.0)
    z = host.round(y)
    return gathered.gather(z, model.index.clone())
