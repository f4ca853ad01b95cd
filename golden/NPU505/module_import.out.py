import torch
import torch_npu

opt = torch_npu.optim.NpuFusedAdamW(params, lr=1e-3, weight_decay=0.01)
