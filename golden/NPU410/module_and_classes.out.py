

def _npu_index_first_axis(x, indices):
    """flash_attn.bert_padding.index_first_axis (written by ascend-port, rule NPU410): the rows ``indices`` of x."""
    return x[indices]


def _npu_index_put_first_axis(values, indices, first_axis_dim):
    """flash_attn.bert_padding.index_put_first_axis (written by ascend-port, rule NPU410): ``values`` scattered to the
    rows ``indices`` of zeros with ``first_axis_dim`` rows."""
    out = values.new_zeros(first_axis_dim, *values.shape[1:])
    out[indices] = values
    return out


def _npu_unpad_input(hidden_states, attention_mask, unused_mask=None):
    """flash_attn.bert_padding.unpad_input (written by ascend-port, rule NPU410): the tokens of (batch, seqlen, ...)
    where the mask (plus unused_mask) is set, their flat indices, cu_seqlens (int32, batch + 1), the longest
    sequence and the used lengths (int32): flash-attn >= 2.7's five values (< 2.7 returns the first four)."""
    import torch as _torch  # (the module does not import torch at its top level)

    masks = attention_mask if unused_mask is None else attention_mask + unused_mask
    seqlens = masks.sum(dim=-1, dtype=_torch.int32)
    indices = _torch.nonzero(masks.flatten(), as_tuple=False).flatten()
    cu_seqlens = _torch.nn.functional.pad(_torch.cumsum(seqlens, dim=0, dtype=_torch.int32), (1, 0))
    tokens = hidden_states.flatten(0, 1)[indices]
    return tokens, indices, cu_seqlens, seqlens.max().item(), attention_mask.sum(dim=-1, dtype=_torch.int32)


def gather(x, mask):
    # five names: flash-attn >= 2.7's result, unchanged
    tokens, indices, cu_seqlens, max_len, used = _npu_unpad_input(x, mask)
    first = _npu_unpad_input(x, mask)[0]
    *_, last = (1, 2)
    rows = _npu_index_first_axis(x.flatten(0, 1), indices)
    return _npu_index_put_first_axis(rows, indices, x.shape[0] * x.shape[1]), first, cu_seqlens, max_len, used
