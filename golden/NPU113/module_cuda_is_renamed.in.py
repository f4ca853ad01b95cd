import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x

    def to_gpu(self):
        return self.cuda()
