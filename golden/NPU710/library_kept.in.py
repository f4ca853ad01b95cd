# A library's module: no backward(), no no_grad()/inference_mode()/eval(): its callers may train with it.
import torch


class CompiledBlock(torch.nn.Module):
    def __init__(self, block):
        super().__init__()
        self.block = torch.compile(block)

    def forward(self, x):
        return self.block(x)


def configured(text):
    return eval(text)  # Python's eval, not a model's .eval(): no sign of inference
