import torch
import torch_npu


def step(batch, model):
    x = batch.npu(non_blocking=True)
    # TODO(ascend-port): NPU303 [low] double precision on the NPU: most NPU operators do not support it; keep this part on the CPU or use float32
    y = x.double()
    # TODO(ascend-port): NPU303 [low] double precision on the NPU: most NPU operators do not support it; keep this part on the CPU or use float32
    z = x.type(torch.float64)
    # TODO(ascend-port): NPU303 [low] DoubleTensor: double precision on the NPU: most NPU operators do not support it; use float32 (FloatTensor) or keep this part on the CPU
    buffer = torch.npu.DoubleTensor(4)
    # TODO(ascend-port): NPU303 [low] DoubleTensor: double precision on the NPU: most NPU operators do not support it; use float32 (FloatTensor) or keep this part on the CPU
    w = x.type(torch.npu.DoubleTensor)
    return y, z, buffer, w


# Must not change: the double-precision names never go to the device.
def host(values):
    x = torch.tensor(values)
    return x.double(), x.type(torch.float64)
