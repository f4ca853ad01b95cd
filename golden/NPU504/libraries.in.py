import cupy as cp
import pynvml
import tensorrt as trt
import transformer_engine.pytorch as te
import amp_C
import bitsandbytes as bnb
from numba import cuda
from pycuda.compiler import SourceModule
import torch_tensorrt


def free_memory(index):
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    return pynvml.nvmlDeviceGetMemoryInfo(handle).free
