import lightning as L
import torch
from lightning.pytorch import Trainer


def main(accelerator: str = "cuda", devices: int = 1):
    fabric = L.Fabric(accelerator="cuda", devices=2, precision="bf16-mixed")
    trainer = Trainer(accelerator="gpu", devices=devices)
    auto = L.Trainer(accelerator="auto", max_epochs=1)
    default = L.Fabric(devices=1)
    if torch.cuda.is_available():
        accelerator = "cuda"
    chosen = L.Fabric(accelerator=accelerator, devices=devices)
    if accelerator == "cuda":
        chosen.print("on a GPU")
    x = torch.zeros(2, device="cuda")
    return fabric, trainer, auto, default, chosen, x
