"""Entry point of the torch.backends group (ascend-port emulate): ``import torch`` imports the stand-in torch_npu,
so the npu device exists even where the script does not import torch_npu. A separate module: when the script
imports torch_npu first, torch's autoload finds it partially initialized here, which is fine."""


def load() -> None:
    import torch_npu  # noqa: F401
