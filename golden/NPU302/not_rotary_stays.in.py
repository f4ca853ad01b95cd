import numpy as np
import torch


def normalise(values):
    stats = torch.tensor(values, dtype=torch.float64)
    mean = stats.double().mean()
    return np.asarray(values, dtype=np.float64) - mean.item()


class Europe:
    @property
    def area(self):
        return torch.zeros(3, dtype=torch.float64).sum()
