import pytest
import torch
import torch_npu

import fused_adam_cuda


def test_fused_adam_kernel():  # ascend-port: ignore[NPU517]
    p = torch.randn(8).npu()
    # TODO(ascend-port): NPU502 [low] fused_adam_cuda.adam() is an op of the CUDA extension fused_adam_cuda: it has no NPU build; port its kernel to an Ascend C operator or replace the call with torch/torch_npu ops
    fused_adam_cuda.adam(p, p.clone(), 1e-3)
