from flash_attn import flash_attn_func
from flash_attn.bert_padding import pad_input, unpad_input


def attention_fn():
    return flash_attn_func


def unpad(hidden_states, attention_mask):
    return unpad_input(hidden_states, attention_mask)
