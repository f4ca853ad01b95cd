# Not torch.optim's fused optimizers: a library's own `fused` flag and apex (NPU505/NPU506) are left to other rules.
import torch
from mylib.optim import Adam

opt = Adam(params, fused=True)
layer = FusedLayer(fused=True)
