import warnings

import torch


def setup(model, args, device):
    # a gate that keeps fp8 off where there is no CUDA: ported, it would turn fp8 on exactly on the NPU
    if device != "cuda":
        warnings.warn("fp8 requires CUDA, ignoring --fp8")
    else:
        enable_fp8(model)
    if args.cuda_graphs and torch.device(device).type == "cuda":
        model = capture_cuda_graph(model)
    use_bnb = args.load_in_8bit and device.type == "cuda"
    if device.type == "cuda":  # no CUDA-only feature here: a plain device branch, ported
        model = model.half()
    return model, use_bnb


def enable_fp8(model):
    pass


def capture_cuda_graph(model):
    return model
