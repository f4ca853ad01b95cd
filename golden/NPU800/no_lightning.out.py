import torch
import torch_npu

accelerator = "npu"
runner = Runner(accelerator="npu")
