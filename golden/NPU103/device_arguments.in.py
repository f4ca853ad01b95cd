import torch

local_rank = 0
a = torch.device("cuda")
b = torch.device("cuda", local_rank)
c = torch.device(f"cuda:{local_rank}")
d = torch.device("cuda:" + str(local_rank))
e = torch.device("cuda:{}".format(local_rank))
f = torch.device("cuda:%d" % local_rank)
x = torch.zeros(3, device="cuda:0")
y = x.to("cuda")
z = x.to(device="cuda", non_blocking=True)
torch.cuda.set_device("cuda:1")
state = torch.load("ckpt.pt", map_location={"cuda:0": "cuda:1"})
state = torch.load("ckpt.pt", "cuda")
w = torch.empty(2, device="cuda" if torch.cuda.is_available() else "cpu")
with torch.autocast(device_type="cuda"):
    pass
