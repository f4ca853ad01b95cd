import torch
import torch_npu

opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
