import apex
import torch


def train(model, optimizer, loss):
    with apex.amp.scale_loss(loss, optimizer) as scaled:
        scaled.backward()
    norm = apex.normalization.FusedRMSNorm(1024, eps=1e-6)
    return norm
