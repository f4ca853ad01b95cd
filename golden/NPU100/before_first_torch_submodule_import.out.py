import numpy as np
import torch_npu
from torch import nn

def f(t):
    return t.npu()
