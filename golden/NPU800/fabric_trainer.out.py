import lightning as L
import torch
import torch_npu
from lightning.pytorch import Trainer


def main(accelerator: str = "cuda", devices: int = 1):
    # TODO(ascend-port): NPU800 [low] accelerator="cuda": Lightning has no built-in Ascend accelerator and rejects "npu": write an Accelerator subclass for torch.npu (setup_device, is_available, auto_device_count, get_parallel_devices) and pass an instance as accelerator= (or register it under a name), with process_group_backend="hccl"
    fabric = L.Fabric(accelerator="cuda", devices=2, precision="bf16-mixed")
    # TODO(ascend-port): NPU800 [low] accelerator="gpu": Lightning has no built-in Ascend accelerator and rejects "npu": write an Accelerator subclass for torch.npu (setup_device, is_available, auto_device_count, get_parallel_devices) and pass an instance as accelerator= (or register it under a name), with process_group_backend="hccl"
    trainer = Trainer(accelerator="gpu", devices=devices)
    # TODO(ascend-port): NPU800 [low] accelerator="auto" picks the CPU on an NPU host: Lightning has no built-in Ascend accelerator and rejects "npu": write an Accelerator subclass for torch.npu (setup_device, is_available, auto_device_count, get_parallel_devices) and pass an instance as accelerator= (or register it under a name), with process_group_backend="hccl"
    auto = L.Trainer(accelerator="auto", max_epochs=1)
    # TODO(ascend-port): NPU800 [low] accelerator defaults to "auto", which picks the CPU on an NPU host: Lightning has no built-in Ascend accelerator and rejects "npu": write an Accelerator subclass for torch.npu (setup_device, is_available, auto_device_count, get_parallel_devices) and pass an instance as accelerator= (or register it under a name), with process_group_backend="hccl"
    default = L.Fabric(devices=1)
    if torch.npu.is_available():
        accelerator = "cuda"
    # TODO(ascend-port): NPU800 [low] accelerator=accelerator: Lightning has no built-in Ascend accelerator and rejects "npu": write an Accelerator subclass for torch.npu (setup_device, is_available, auto_device_count, get_parallel_devices) and pass an instance as accelerator= (or register it under a name), with process_group_backend="hccl"
    chosen = L.Fabric(accelerator=accelerator, devices=devices)
    if accelerator == "cuda":
        chosen.print("on a GPU")
    x = torch.zeros(2, device="npu")
    return fabric, trainer, auto, default, chosen, x
