import torch
from flash_attn.bert_padding import pad_input, unpad_input, unpad_input_for_concatenated_sequences


def whole(x, mask):
    # the result is kept whole: which release's tuple it expects is unknown, left on flash-attn
    result = unpad_input(x, mask)
    return pad_input(result[0], result[1], x.shape[0], x.shape[1])


def concatenated(x, lengths):
    return unpad_input_for_concatenated_sequences(x, lengths)
