try:
    # TODO(ascend-port): NPU409 [low] flash_attn has no NPU build, so this import fails there: port flash_attn_func (imported as fa: import it under its own name to port its calls) by hand (NPU400-NPU406 port its attention calls)
    from flash_attn import flash_attn_func as fa
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    fa = None


def attention(q, k, v):
    return fa(q, k, v, causal=True)
