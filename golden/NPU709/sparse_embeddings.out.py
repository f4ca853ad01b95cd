# _fused_sgd_ refuses sparse gradients: SGD is left in a module that makes them; AdamW is ported.
import torch
import torch_npu
import torch.nn as nn

embedding = nn.Embedding(1000, 16, sparse=True).npu()
sgd = torch.optim.SGD(embedding.parameters(), lr=0.1)
head = nn.Linear(16, 2).npu()
adamw = torch.optim.AdamW(head.parameters(), lr=1e-3, fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
