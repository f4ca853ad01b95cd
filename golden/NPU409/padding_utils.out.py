# TODO(ascend-port): NPU409 [low] flash_attn has no NPU build, so this import fails there: port flash_attn_func (used as a value) by hand (NPU400-NPU406 port its attention calls)
from flash_attn import flash_attn_func
# TODO(ascend-port): NPU409 [low] flash_attn has no NPU build, so this import fails there: port pad_input, unpad_input by hand (NPU400-NPU406 port its attention calls)
from flash_attn.bert_padding import pad_input, unpad_input


def attention_fn():
    return flash_attn_func


def unpad(hidden_states, attention_mask):
    return unpad_input(hidden_states, attention_mask)
