import pytest
import torch

import fused_layer_norm_cuda


# the class tests torch's own layer norm too: its guard is ported (that test runs on the NPU), and the kernel's test
# gets a CUDA guard of its own
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
class TestLayerNorm:
    def test_forward(self):
        x = torch.randn(4, 8, device="cuda")
        fused_layer_norm_cuda.forward(x, (8,), 1e-5)

    def test_reference(self):
        x = torch.randn(4, 8, device="cuda")
        torch.nn.functional.layer_norm(x, (8,))
