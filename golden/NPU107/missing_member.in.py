import torch

low, high = torch.cuda.Stream.priority_range()
stream = torch.cuda.Stream(priority=high)
stream.synchronize()
torch.cuda.Stream.synchronize(stream)
