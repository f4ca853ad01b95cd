import torch
import torch_npu


def weights(counts, device, local_rank):
    # TODO(ascend-port): NPU303 [low] double precision on the NPU: most NPU operators do not support it; keep this part on the CPU or use float32
    w = torch.tensor(counts, dtype=torch.float64, device="npu")
    # TODO(ascend-port): NPU303 [low] double precision on the NPU: most NPU operators do not support it; keep this part on the CPU or use float32
    v = torch.as_tensor(counts).double().npu()
    # TODO(ascend-port): NPU303 [low] double precision on the NPU: most NPU operators do not support it; keep this part on the CPU or use float32
    u = torch.zeros(len(counts), dtype=torch.float64).to(device)
    # TODO(ascend-port): NPU303 [low] double precision on the NPU: most NPU operators do not support it; keep this part on the CPU or use float32
    t = torch.ones(3).to(device, dtype=torch.float64)
    return w, v, u, t
