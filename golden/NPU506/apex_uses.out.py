import torch
try:
    # TODO(ascend-port): NPU506 [low] apex.amp: use torch.autocast("npu", dtype=...) with torch.npu.amp.GradScaler (amp.initialize -> drop it, amp.scale_loss(loss, opt) -> scaler.scale(loss)), or Ascend's apex patch
    from apex import amp
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    amp = None
# TODO(ascend-port): NPU506 [low] apex.parallel: use torch.nn.parallel.DistributedDataParallel (backend hccl)
from apex.parallel import DistributedDataParallel as ApexDDP
# TODO(ascend-port): NPU506 [low] apex FusedLayerNorm: use torch.nn.LayerNorm (same arguments)
# TODO(ascend-port): NPU506 [low] apex FusedRMSNorm: use torch.nn.RMSNorm (same arguments, torch >= 2.4) or torch_npu.npu_rms_norm
from apex.normalization import FusedLayerNorm, FusedRMSNorm
try:
    # TODO(ascend-port): NPU506 [low] apex FusedAdam: use torch.optim.AdamW (adam_w_mode=True, apex's default; apex's weight_decay default is 0) or torch.optim.Adam
    # TODO(ascend-port): NPU506 [low] apex FusedLAMB: torch_npu.optim.NpuFusedLamb is the closest (it does not clip the gradient norm: review the arguments)
    from apex.optimizers import FusedAdam, FusedLAMB
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    FusedAdam = None
    FusedLAMB = None
# TODO(ascend-port): NPU506 [low] apex multi_tensor_applier: use torch._foreach_* ops (torch._foreach_norm, torch._foreach_mul_)
from apex.multi_tensor_apply import multi_tensor_applier


def setup(model, optimizer, params):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    lamb = FusedLAMB(params, lr=1e-3)
    # TODO(ascend-port): NPU506 [low] apex FusedAdam: use torch.optim.AdamW (adam_w_mode=True, apex's default; apex's weight_decay default is 0) or torch.optim.Adam, by hand: this call has 3 positional arguments
    adam = FusedAdam(params, 1e-3, False)
    # TODO(ascend-port): NPU506 [low] apex FusedAdam: use torch.optim.AdamW (adam_w_mode=True, apex's default; apex's weight_decay default is 0) or torch.optim.Adam, by hand: this call has capturable=True
    adam2 = FusedAdam(params, lr=1e-3, capturable=True)
    return model, optimizer, lamb, adam, adam2
