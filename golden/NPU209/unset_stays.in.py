import os

import torch

# must not change: unsetting a variable that has no effect on the NPU leaves nothing to do there
os.environ.pop("NCCL_DEBUG", None)
os.environ.pop("NCCL_IB_DISABLE")
del os.environ["NCCL_DEBUG"]
os.unsetenv("NCCL_IB_DISABLE")
