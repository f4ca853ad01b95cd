import torch as th
from torch import compile

# TODO(ascend-port): NPU707 [low] torch.compile of code this module trains (it calls backward()): on the NPU, train eagerly first (drop the call or pass disable=True), then try torch_npu's inductor (needs triton-ascend) or TorchAir (backend=torchair.get_npu_backend()) and compare the losses
step = compile(train_step, mode="default" if hasattr(th, "npu") and th.npu.is_available() else "reduce-overhead")
# TODO(ascend-port): NPU707 [low] torch.compile of code this module trains (it calls backward()): on the NPU, train eagerly first (drop the call or pass disable=True), then try torch_npu's inductor (needs triton-ascend) or TorchAir (backend=torchair.get_npu_backend()) and compare the losses
graphs = th.compile(model, mode="default" if hasattr(th, "npu") and th.npu.is_available() else 'reduce-overhead')


def train_step(batch):
    model(batch).sum().backward()
