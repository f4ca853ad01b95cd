# One TODO above a run of imports of the same CUDA-only library; another library, or an import further down, gets its own.
from bitsandbytes.optim import AdamW8bit
import bitsandbytes.functional as bnbF
import bitsandbytes as bnb
import cupy

import torch

try:
    import bitsandbytes
except ImportError:
    bitsandbytes = None
