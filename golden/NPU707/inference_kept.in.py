# No backward() in the module: torch.compile runs on the NPU as it is (inductor, or eager under the emulator).
import torch

model = torch.compile(model)
with torch.inference_mode():
    images = pipe(prompt)
