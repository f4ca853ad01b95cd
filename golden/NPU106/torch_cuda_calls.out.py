import torch
import torch_npu

torch.npu.synchronize()
n = torch.npu.device_count()
torch.npu.manual_seed_all(0)
free, total = torch.npu.mem_get_info()
stream = torch.npu.Stream()
with torch.npu.stream(stream):
    pass
scaler = torch.npu.amp.GradScaler()
module = torch.npu
