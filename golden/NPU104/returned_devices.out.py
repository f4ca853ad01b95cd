# A returned device string moves with the test that chose it: a function named for a device, a value chosen by
# asking CUDA, a return under a CUDA device test. (Other returned strings stay.)
import torch
import torch_npu


def get_device():
    return "npu" if torch.npu.is_available() else "cpu"


def _resolve_device_map(local_rank):
    torch.npu.set_device(local_rank)
    return f"npu:{local_rank}"


def resolve(local_rank, torch_device):
    if torch_device == "npu":
        torch.npu.set_device(local_rank)
        return f"npu:{local_rank}"
    return "cpu"


def kernel_backend():
    return "cuda"


def device_and_dtype():
    if torch.npu.is_available():
        return "npu", torch.bfloat16
    return "cpu", torch.float32


def toolkit():
    return "cuda", "12.1"


def get_device_properties():
    # a description of the host, not a device chosen by a CUDA test: stays
    if IS_CUDA_SYSTEM:
        # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU, so the call stays on torch.cuda: test the feature instead, e.g. torch.npu.is_bf16_supported()
        major, _ = torch.cuda.get_device_capability()
        return ("cuda", major)
    return ("cpu", None)
