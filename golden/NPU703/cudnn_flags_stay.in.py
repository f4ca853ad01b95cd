# cuDNN flags are accepted and harmless on NPU: no rewrite, no TODO.
import torch
import torch.backends.cudnn as cudnn

torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = False
torch.backends.cudnn.enabled = True
cudnn.benchmark = True
if torch.backends.cudnn.is_available():
    pass
