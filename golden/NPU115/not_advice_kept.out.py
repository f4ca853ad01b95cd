import torch


def pick_dtype():
    # not advice: the check chooses the dtype (NPU108's guard, with its TODO)
    # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU, so the call stays on torch.cuda: test the feature instead, e.g. torch.npu.is_bf16_supported()
    if torch.cuda.get_device_capability()[0] < 8:
        dtype = torch.float16
    else:
        dtype = torch.bfloat16
    return dtype


def require():
    # not advice either: it stops the program
    # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU, so the call stays on torch.cuda: test the feature instead, e.g. torch.npu.is_bf16_supported()
    if torch.cuda.get_device_capability()[0] < 7:
        raise RuntimeError("needs Volta or newer")
