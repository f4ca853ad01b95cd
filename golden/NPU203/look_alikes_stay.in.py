from mylib import is_nccl_available


def check(cfg):
    return cfg.is_nccl_available and is_nccl_available()
