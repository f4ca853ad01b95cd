from flash_attn import bert_padding
from flash_attn.bert_padding import IndexFirstAxis, index_put_first_axis


def gather(x, mask):
    # five names: flash-attn >= 2.7's result, unchanged
    tokens, indices, cu_seqlens, max_len, used = bert_padding.unpad_input(x, mask)
    first = bert_padding.unpad_input(x, mask)[0]
    *_, last = (1, 2)
    rows = IndexFirstAxis.apply(x.flatten(0, 1), indices)
    return index_put_first_axis(rows, indices, x.shape[0] * x.shape[1]), first, cu_seqlens, max_len, used
