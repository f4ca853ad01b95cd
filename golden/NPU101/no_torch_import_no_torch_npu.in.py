# This module never imports torch, so the port adds no `import torch_npu` either.
def to_device(batch):
    return [t.cuda(non_blocking=True) for t in batch]
