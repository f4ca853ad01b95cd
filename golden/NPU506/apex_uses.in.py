import torch
from apex import amp
from apex.parallel import DistributedDataParallel as ApexDDP
from apex.normalization import FusedLayerNorm, FusedRMSNorm
from apex.optimizers import FusedAdam, FusedLAMB
from apex.multi_tensor_apply import multi_tensor_applier


def setup(model, optimizer, params):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    lamb = FusedLAMB(params, lr=1e-3)
    adam = FusedAdam(params, 1e-3, False)
    adam2 = FusedAdam(params, lr=1e-3, capturable=True)
    return model, optimizer, lamb, adam, adam2
