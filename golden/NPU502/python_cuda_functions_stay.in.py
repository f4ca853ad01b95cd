# Must not change: functions of the project's own Python named for CUDA (a compiled extension is a module: its ops
# are called as its attributes, the module itself never is).
from mypkg.utils import move_to_cuda, to_cuda as on_gpu


def step(batch, model):
    batch = move_to_cuda(batch)
    x = on_gpu(batch["x"])
    return model(x)
