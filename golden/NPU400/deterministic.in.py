import torch
from flash_attn import flash_attn_func, flash_attn_varlen_func


class Attention(torch.nn.Module):
    def forward(self, q, k, v, deterministic=False):
        # deterministic only picks the backward's algorithm: the forward is the same, the call is ported
        return flash_attn_func(q, k, v, causal=True, deterministic=deterministic)

    def packed(self, q, k, v, cu, max_len):
        return flash_attn_varlen_func(q, k, v, cu, cu, max_len, max_len, deterministic=self.cfg.deterministic)

    def with_side_effect(self, q, k, v):
        # the call evaluating the flag would be dropped with it: left on flash-attn with NPU403's TODO
        return flash_attn_func(q, k, v, deterministic=self.next_flag())
