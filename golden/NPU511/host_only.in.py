PRECISION = "tf32x3"  # a host-side choice: not a tl.dot in a kernel


def dot(a, b, input_precision="tf32x3"):
    return (a * b).sum()
