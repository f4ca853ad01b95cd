import torch

class Cfg:
    cuda = True

cfg = Cfg()
if cfg.cuda:
    print("using cuda")  # the word cuda in strings and comments stays
