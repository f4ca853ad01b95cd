import torch
import torch_npu


# bf16 only inside autocast: the parameters stay fp32, so the optimizer is ported.
def train(model, batches):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.05, fused=True if hasattr(torch, "npu") and torch.npu.is_available() else None)
    for x in batches:
        with torch.autocast("npu", dtype=torch.bfloat16):
            loss = model(x).sum()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
