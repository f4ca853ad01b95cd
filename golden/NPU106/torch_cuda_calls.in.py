import torch

torch.cuda.synchronize()
n = torch.cuda.device_count()
torch.cuda.manual_seed_all(0)
free, total = torch.cuda.mem_get_info()
stream = torch.cuda.Stream()
with torch.cuda.stream(stream):
    pass
scaler = torch.cuda.amp.GradScaler()
module = torch.cuda
