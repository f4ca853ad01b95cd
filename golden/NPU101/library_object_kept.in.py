import bitsandbytes as bnb
import torch
from bitsandbytes.nn import Int8Params


class LoRALinear(torch.nn.Module):
    def merge(self, lora_data):
        weight = self.linear.weight
        weight_data = bnb.functional.dequantize_4bit(weight.data, weight.quant_state)
        weight_data += lora_data
        # a bitsandbytes weight is quantized by moving it to CUDA: its .cuda() stays (the library is CUDA-only)
        self.linear.weight = bnb.nn.Params4bit(weight_data, requires_grad=False, **weight.__dict__)
        self.linear.weight.cuda(weight.device)

    def unmerge(self, lora_data):
        # not a bitsandbytes object here: ported
        self.linear.weight.cuda()
        # what the library's functions return is a torch tensor: ported
        return bnb.functional.dequantize_4bit(self.linear.weight.data, self.linear.weight.quant_state).cuda()


def quantize(w):
    layer = bnb.nn.Linear4bit(16, 16).cuda()
    int8 = Int8Params(w, requires_grad=False)
    int8 = int8.cuda()
    return layer, int8, w.cuda()
