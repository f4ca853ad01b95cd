import torch


def polar_table(freqs):
    # complex numbers made from a cos/sin stack (a table, not a rotation of activations)
    return torch.view_as_complex(torch.stack([torch.cos(freqs), torch.sin(freqs)], dim=-1))


def spectrum(x):
    # complex numbers that are never viewed as real again
    return torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2)).abs()


def other_axis(x, w):
    # pairs along another axis than the last
    z = torch.view_as_complex(x.reshape(x.shape[0], -1, 2))
    return torch.view_as_real(z * w)


def third_axis(x, freqs):
    # unflatten of an axis that is the last one only for 4-D x (not known here)
    z = torch.view_as_complex(x.unflatten(3, (-1, 2)))
    return torch.view_as_real(z * freqs).flatten(3, 4)
