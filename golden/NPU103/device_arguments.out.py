import torch
import torch_npu

local_rank = 0
a = torch.device("npu")
b = torch.device("npu", local_rank)
c = torch.device(f"npu:{local_rank}")
d = torch.device("npu:" + str(local_rank))
e = torch.device("npu:{}".format(local_rank))
f = torch.device("npu:%d" % local_rank)
x = torch.zeros(3, device="npu:0")
y = x.to("npu")
z = x.to(device="npu", non_blocking=True)
torch.npu.set_device("npu:1")
state = torch.load("ckpt.pt", map_location={"npu:0": "npu:1"})
state = torch.load("ckpt.pt", "npu")
w = torch.empty(2, device="npu" if torch.npu.is_available() else "cpu")
with torch.autocast(device_type="npu"):
    pass
