import torch


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()
    elif device.type == "npu":
        torch.npu.synchronize()


def count():
    if torch.cuda.is_available():
        return torch.cuda.device_count()
    return 0


def require_multi_gpu(test_case):
    return test_case if torch.cuda.device_count() > 1 else None


def launch(state):
    if state.distributed_type == "MULTI_GPU":
        return torch.cuda.device_count()
    return state.num_processes


def probe():
    device = torch.cuda.current_device()  #ignore-cuda
    return device


def flash_ok():
    if not torch.cuda.is_available():
        return False
    q = torch.empty(1, 16, device="cuda").cuda()
    torch.cuda.synchronize()
    return q
