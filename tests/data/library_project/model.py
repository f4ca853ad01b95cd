"""A tiny Llama-style decoder that packs padded batches for flash-attn's varlen kernel."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_varlen_func
    from flash_attn.bert_padding import index_first_axis, pad_input, unpad_input

    HAS_FLASH_ATTN = True
except ImportError:
    HAS_FLASH_ATTN = False


@dataclass
class TinyLlamaConfig:
    vocab_size: int = 32000
    dim: int = 512
    n_layers: int = 8
    n_heads: int = 8
    max_seq_len: int = 2048
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rope(head_dim: int, max_seq_len: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    freqs = torch.outer(torch.arange(max_seq_len, dtype=torch.float32), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg: TinyLlamaConfig):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.head_dim = cfg.dim // cfg.n_heads
        self.wqkv = nn.Linear(cfg.dim, 3 * cfg.dim, bias=False)
        self.wo = nn.Linear(cfg.dim, cfg.dim, bias=False)

    def forward(self, x, cos, sin, attention_mask):
        bsz, seqlen, dim = x.shape
        q, k, v = self.wqkv(x).view(bsz, seqlen, 3, self.n_heads, self.head_dim).unbind(2)
        cos = cos[None, :seqlen, None, :].to(q.dtype)
        sin = sin[None, :seqlen, None, :].to(q.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if HAS_FLASH_ATTN and q.dtype in (torch.float16, torch.bfloat16):
            # Pack the real tokens of every row: no compute on padding.
            q_unpad, indices, cu_seqlens, max_seqlen = unpad_input(q, attention_mask)
            k_unpad = index_first_axis(k.reshape(bsz * seqlen, self.n_heads, self.head_dim), indices)
            v_unpad = index_first_axis(v.reshape(bsz * seqlen, self.n_heads, self.head_dim), indices)
            out = flash_attn_varlen_func(
                q_unpad, k_unpad, v_unpad, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen, causal=True
            )
            out = pad_input(out, indices, bsz, seqlen)
        else:
            mask = torch.ones(seqlen, seqlen, dtype=torch.bool, device=x.device).tril()
            mask = mask[None, None] & attention_mask[:, None, None, :].bool()
            out = F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=mask
            ).transpose(1, 2)
        return self.wo(out.reshape(bsz, seqlen, dim))


class MLP(nn.Module):
    def __init__(self, cfg: TinyLlamaConfig):
        super().__init__()
        hidden = 4 * cfg.dim
        self.w1 = nn.Linear(cfg.dim, hidden, bias=False)
        self.w3 = nn.Linear(cfg.dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, cfg.dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg: TinyLlamaConfig):
        super().__init__()
        self.attn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.attn = Attention(cfg)
        self.mlp_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin, attention_mask):
        x = x + self.attn(self.attn_norm(x), cos, sin, attention_mask)
        return x + self.mlp(self.mlp_norm(x))


class TinyLlama(nn.Module):
    def __init__(self, cfg: TinyLlamaConfig):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        cos, sin = rope(cfg.dim // cfg.n_heads, cfg.max_seq_len, cfg.rope_theta)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)

    def forward(self, input_ids, attention_mask):
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x, self.cos, self.sin, attention_mask)
        logits = self.lm_head(self.norm(x)).float()
        # Next-token loss over the real tokens only.
        labels = input_ids[:, 1:].masked_fill(attention_mask[:, 1:] == 0, -100)
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100)
