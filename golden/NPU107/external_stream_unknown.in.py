# A handle from a library the module does not name (ctypes here): the stream stays CUDA's all the same, since
# every handle a CUDA program hands torch is a CUDA stream.
import ctypes

import torch

lib = ctypes.CDLL("libgreen_ctx.so")


def green_stream(device):
    handle = ctypes.c_void_p()
    lib.create_stream(device, ctypes.byref(handle))
    return torch.cuda.ExternalStream(handle.value, device=device)
