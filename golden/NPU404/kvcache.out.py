try:
    # TODO(ascend-port): NPU409 [low] flash_attn has no NPU build, so this import fails there: port flash_attn_with_kvcache by hand (NPU400-NPU406 port its attention calls)
    from flash_attn import flash_attn_with_kvcache
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    flash_attn_with_kvcache = None


def decode(q, k_cache, v_cache, k, v, cache_seqlens):
    # TODO(ascend-port): NPU404 [low] flash_attn_with_kvcache: decoding with a KV cache maps to torch_npu.npu_fused_infer_attention_score (block_table, actual_seq_lengths); port by hand
    return flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=cache_seqlens, causal=True)
