try:
    # TODO(ascend-port): NPU409 [low] flash_attn has no NPU build, so this import fails there: port flash_attn_func (used as a value) by hand (NPU400-NPU406 port its attention calls)
    from flash_attn import flash_attn_func
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    flash_attn_func = None
try:
    # TODO(ascend-port): NPU409 [low] flash_attn has no NPU build, so this import fails there: port unpad_input (a result not unpacked: 4 values before flash-attn 2.7, 5 since) by hand (NPU400-NPU406 port its attention calls)
    from flash_attn.bert_padding import pad_input, unpad_input
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    pad_input = None
    unpad_input = None


def attention_fn():
    return flash_attn_func


def unpad(hidden_states, attention_mask):
    return unpad_input(hidden_states, attention_mask)
