import torch

accelerator = "cuda"
runner = Runner(accelerator="cuda")
