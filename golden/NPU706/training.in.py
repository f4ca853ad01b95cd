import torch

model = torch.nn.Linear(4, 4).cuda()
fast = torch.compile(model, mode="reduce-overhead")
fast_full = torch.compile(model, fullgraph=True, mode="reduce-overhead")
opt = torch.optim.AdamW(model.parameters())
for x in batches:
    loss = fast(x.cuda()).pow(2).mean()
    loss.backward()
    opt.step()
