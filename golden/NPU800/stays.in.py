import lightning as L
from transformers import Trainer

from mypackage.accelerators import NPUAccelerator

cpu = L.Fabric(accelerator="cpu", devices=1)
custom = L.Trainer(accelerator=NPUAccelerator(), devices=1)
passed_on = L.Trainer(**trainer_kwargs)
hf = Trainer(model=model, args=args)
