import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass


def pick(accelerator=None):
    # a None in the list (the value may be left unset) does not keep "npu" out of it
    if accelerator not in ["auto", "cpu", "mps", "cuda", "npu", "gpu", None]:
        raise ValueError(accelerator)
    if accelerator == "cuda":
        torch.cuda.set_device(0)
    elif accelerator == "npu":
        torch.npu.set_device(0)
    elif accelerator == "mps":
        pass
    return accelerator
