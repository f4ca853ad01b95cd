"""Pretrain TinyLlama on synthetic right-padded batches: torchrun + DDP on NCCL, bf16 autocast, apex's FusedAdam.

torchrun --nproc-per-node 8 train.py --steps 1000
"""

from __future__ import annotations

import argparse
import json
import os
from typing import NamedTuple

import torch
import torch.cuda.amp as amp
import torch.distributed as dist
from apex.optimizers import FusedAdam
from model import TinyLlama, TinyLlamaConfig
from torch.nn.parallel import DistributedDataParallel as DDP


def parse_args(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--tiny", action="store_true", help="a 2-layer, 64-wide model (smoke tests)")
    return parser.parse_args(argv)


def model_config(tiny: bool) -> TinyLlamaConfig:
    if tiny:
        return TinyLlamaConfig(vocab_size=128, dim=64, n_layers=2, n_heads=4, max_seq_len=64)
    return TinyLlamaConfig()


class Batch(NamedTuple):
    input_ids: torch.Tensor
    attention_mask: torch.Tensor

    def cuda(self, device=None):
        """Both tensors on the GPU; the copies do not wait for the host."""
        return Batch(
            self.input_ids.cuda(device, non_blocking=True), self.attention_mask.cuda(device, non_blocking=True)
        )


def make_batches(cfg, steps, batch_size, seq_len, rank=0, seed=1234):
    """Counting sequences (each token is the previous one plus one) from random starts, right-padded to seq_len:
    each row keeps a random number of real tokens."""
    generator = torch.Generator().manual_seed(seed + rank)
    batches = []
    for _ in range(steps):
        starts = torch.randint(cfg.vocab_size, (batch_size, 1), generator=generator)
        input_ids = (starts + torch.arange(seq_len)) % cfg.vocab_size
        lengths = torch.randint(seq_len // 2, seq_len + 1, (batch_size,), generator=generator)
        attention_mask = (torch.arange(seq_len)[None, :] < lengths[:, None]).long()
        batches.append((input_ids * attention_mask, attention_mask))
    return batches


def train(model, optimizer, batches, autocast):
    model.train()
    losses = []
    for input_ids, attention_mask in batches:
        with autocast:
            loss = model(input_ids, attention_mask)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses


def main(argv=None):
    args = parse_args(argv)
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    os.environ["NCCL_BUFFSIZE"] = str(8 * 1024 * 1024)
    if world_size > 1:
        dist.init_process_group("nccl")
    device = local_rank % torch.cuda.device_count()
    torch.cuda.set_device(device)

    cfg = model_config(args.tiny)
    torch.manual_seed(0)
    model = TinyLlama(cfg).to(device)
    optimizer = FusedAdam(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    if world_size > 1:
        model = DDP(model, device_ids=[device])
    batches = [
        Batch(input_ids, attention_mask).cuda(device)
        for input_ids, attention_mask in make_batches(cfg, args.steps, args.batch_size, args.seq_len, local_rank)
    ]
    losses = train(model, optimizer, batches, amp.autocast(dtype=torch.bfloat16))
    if local_rank == 0:
        device_name = str(batches[0].input_ids.device)
        print(
            json.dumps(
                {
                    "losses": losses,
                    "world_size": world_size,
                    "device": device_name,
                    "optimizer": type(optimizer).__name__,
                }
            )
        )
    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
