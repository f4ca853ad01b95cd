import apex
import torch

opt = apex.optimizers.FusedAdam(params, lr=1e-3, weight_decay=0.01)
