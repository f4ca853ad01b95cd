import torch

class Cfg:
    cuda = True

cfg = Cfg()
if cfg.cuda:
    print("using cuda")  # the word cuda in strings and comments stays

quantizer = object()
quantizer.cuda(cfg, meta={}, device="npu:0")  # a user's own method with another signature stays
