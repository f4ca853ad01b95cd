# Inference: NPU graphs through inductor (torch_npu's npugraph trees) are what reduce-overhead means on the NPU.
import torch

decoder = torch.compile(model.decoder, mode="reduce-overhead", fullgraph=True)
with torch.no_grad():
    tokens = decoder(prompt)
