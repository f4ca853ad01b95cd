def pick(name):
    if name == "cudnn":
        return 1
    return name.startswith("cuda")
