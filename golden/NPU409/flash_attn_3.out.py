try:
    # TODO(ascend-port): NPU409 [low] flash_attn_interface has no NPU build, so this import fails there: port flash_attn_func by hand (NPU400-NPU406 port its attention calls)
    from flash_attn_interface import flash_attn_func
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    flash_attn_func = None


def attention(q, k, v):
    return flash_attn_func(q, k, v, causal=True)
