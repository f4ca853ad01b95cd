import json
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP


def make_model():
    return nn.Sequential(
        nn.Conv1d(2, 8, 5, padding=2),
        nn.GroupNorm(2, 8),
        nn.GELU(),
        nn.Conv1d(8, 8, 3, stride=2),
        nn.AdaptiveAvgPool1d(1),
        nn.Flatten(),
        nn.Linear(8, 4),
    )


def batch(rank, step):
    generator = torch.Generator().manual_seed(100 * rank + step)
    return torch.randn(6, 2, 32, generator=generator), torch.randint(0, 4, (6,), generator=generator)


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    torch.manual_seed(0)
    model = DDP(make_model().cuda(), device_ids=[local_rank])
    model.register_comm_hook(None, default_hooks.allreduce_hook)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses, norms = [], []
    for step in range(3):
        x, y = batch(rank, step)
        loss = F.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        # the gradient's squared norm from this rank's shard of a reduce-scatter (the grads are averaged already)
        flat = torch.cat([p.grad.flatten() for p in model.parameters()])
        flat = F.pad(flat, (0, (-flat.numel()) % world))
        shard = torch.empty(flat.numel() // world, device="cuda")
        work = dist.reduce_scatter_tensor(shard, flat, op=dist.ReduceOp.AVG, async_op=True)
        squared = work.get_future().then(lambda future: future.value()[0].square().sum()).wait()
        dist.all_reduce(squared)
        optimizer.step()
        losses.append(loss.item())
        norms.append(squared.item())
    if rank == 0:
        print(json.dumps({"losses": losses, "norms": norms}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
