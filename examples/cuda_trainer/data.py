"""Tiny synthetic token dataset: random tokens with a Zipf-like distribution."""
from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


def zipf_probs(vocab_size: int, alpha: float = 1.1) -> np.ndarray:
    # float64 on CPU on purpose: the normalisation underflows in float32
    ranks = np.arange(1, vocab_size + 1, dtype=np.float64)
    weights = 1.0 / np.power(ranks, alpha)
    return weights / weights.sum()


class RandomTokenDataset(Dataset):
    def __init__(self, vocab_size: int, seq_len: int, num_samples: int = 10_000, seed: int = 0):
        rng = np.random.default_rng(seed)
        probs = zipf_probs(vocab_size)
        tokens = rng.choice(vocab_size, size=(num_samples, seq_len + 1), p=probs)
        self.tokens = torch.from_numpy(tokens.astype(np.int64))

    def __len__(self) -> int:
        return self.tokens.size(0)

    def __getitem__(self, i: int):
        row = self.tokens[i]
        return row[:-1], row[1:]


def build_dataloader(vocab_size: int, seq_len: int, batch_size: int,
                     distributed: bool = False, num_workers: int = 2) -> DataLoader:
    ds = RandomTokenDataset(vocab_size, seq_len)
    sampler = DistributedSampler(ds, shuffle=True) if distributed else None
    return DataLoader(
        ds,
        batch_size=batch_size,
        shuffle=sampler is None,
        sampler=sampler,
        num_workers=num_workers,
        pin_memory=True,
        drop_last=True,
        persistent_workers=num_workers > 0,
    )
