import triton
import triton.language as tl
try:
    from triton.language.extra.cann import libdevice
except ImportError:
    try:
        from triton.language.extra.ascend import libdevice
    except ImportError:
        from triton.language.extra.cuda import libdevice
try:
    import triton.language.extra.cann.libdevice as ld
except ImportError:
    try:
        import triton.language.extra.ascend.libdevice as ld
    except ImportError:
        import triton.language.extra.cuda.libdevice as ld
try:
    from triton.language.extra.cann.libdevice import exp, tanh
except ImportError:
    try:
        from triton.language.extra.ascend.libdevice import exp, tanh
    except ImportError:
        from triton.language.extra.cuda.libdevice import exp, tanh


def load_generic():
    try:
        from triton.language.extra.cann import libdevice as generic
    except ImportError:
        try:
            from triton.language.extra.ascend import libdevice as generic
        except ImportError:
            from triton.language.extra import libdevice as generic  # the generic stubs are not remapped on Ascend
    return generic
