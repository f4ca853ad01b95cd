import torch_npu
try:
    # TODO(ascend-port): NPU409 [low] flash_attn has no NPU build, so this import fails there: port __version__ by hand (NPU400-NPU406 port its attention calls)
    import flash_attn
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    flash_attn = None
try:
    from flash_attn import flash_attn_func
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    flash_attn_func = None


_NPU_ATTENTION_MASKS = {}


def _npu_flash_attn(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                    cu_seqlens_q=None, cu_seqlens_k=None, top_left=False):
    """flash-attn's attention on torch_npu.npu_fusion_attention (written by ascend-port, rules NPU400-NPU405).

    q, k, v: (batch, seq, heads, head_dim), or (tokens, heads, head_dim) with cu_seqlens_q/k (varlen). Fewer
    key/value heads than query heads (GQA) need no repeat. Causal and sliding-window masks align bottom-right, as
    in flash-attn >= 2.1; top_left=True aligns a causal mask top-left (xformers' LowerTriangularMask).
    """
    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** -0.5  # the op's own default scale is 1.0
    left, right = window_size
    options = {}
    if cu_seqlens_q is None:
        layout, head_num = "BSND", q.shape[2]
    else:  # the op takes the cumulative sequence ends as host lists
        layout, head_num = "TND", q.shape[1]
        options.update(actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist())
    if causal or left >= 0 or right >= 0:
        mask = _NPU_ATTENTION_MASKS.get(q.device)
        if mask is None:  # the compressed 2048x2048 mask of the causal and band modes (True: masked out)
            import torch as _torch

            mask = _torch.triu(_torch.ones(2048, 2048, dtype=_torch.bool, device=q.device), diagonal=1)
            _NPU_ATTENTION_MASKS[q.device] = mask
        options["atten_mask"] = mask
        if left < 0 and right < 0:
            options["sparse_mode"] = 2 if top_left else 3
        else:  # band mode: keys from i - left to i + right around the bottom-right diagonal
            options.update(sparse_mode=4, pre_tockens=left if left >= 0 else 2147483647,
                           next_tockens=0 if causal else right if right >= 0 else 2147483647)
    return torch_npu.npu_fusion_attention(q, k, v, head_num, layout, scale=softmax_scale,
                                          keep_prob=1.0 - dropout_p, **options)[0]


def attention(q, k, v):
    # softcap has no NPU mapping: this call stays on flash-attn, so its version check must stay too
    if flash_attn.__version__ >= "2.6.0":
        # TODO(ascend-port): NPU403 [low] flash_attn_func left on flash-attn: softcap=30.0 has no npu_fusion_attention mapping
        return flash_attn_func(q, k, v, causal=True, softcap=30.0)
    return _npu_flash_attn(q, k, v, causal=True)
