import torch


def weights(counts, device, local_rank):
    w = torch.tensor(counts, dtype=torch.float64, device="cuda")
    v = torch.as_tensor(counts).double().cuda()
    u = torch.zeros(len(counts), dtype=torch.float64).to(device)
    t = torch.ones(3).to(device, dtype=torch.float64)
    return w, v, u, t
