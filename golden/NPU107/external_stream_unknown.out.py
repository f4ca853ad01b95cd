# A handle from a library the module does not name (ctypes here): the stream stays CUDA's all the same, since
# every handle a CUDA program hands torch is a CUDA stream.
import ctypes

import torch

lib = ctypes.CDLL("libgreen_ctx.so")


def green_stream(device):
    handle = ctypes.c_void_p()
    lib.create_stream(device, ctypes.byref(handle))
    # TODO(ascend-port): NPU107 [low] torch.cuda.ExternalStream wraps a CUDA stream handle: it stays on torch.cuda, and the code that uses the stream must be ported with it; on Ascend make the stream with torch.npu.Stream(), or wrap an ACL stream (acl.rt.create_stream) in torch.npu.ExternalStream
    return torch.cuda.ExternalStream(handle.value, device=device)
