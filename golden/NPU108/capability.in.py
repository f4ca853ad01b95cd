import torch

def use_bf16():
    major, minor = torch.cuda.get_device_capability()
    return major >= 8

sms = torch.cuda.get_device_properties(0).multi_processor_count
