"""The helper functions the attention rules call, and their insertion into a ported module.

A rewritten call site reads `_npu_flash_attn(q, k, v, causal=True)`; the expanded npu_fusion_attention call (scale,
layout, head count, compressed causal mask cached per device, varlen lists) lives once in the module, in front of the
first top-level statement that uses it. Insertion happens after every statement is ported (PortTransformer.finish),
so it works however the module was split into chunks, and it is idempotent: a helper already defined at the top
level of the module is never written again (python/definitions.py).

The flash helper is right for training too (tests/test_training_equivalence.py, forward and backward): the cached
mask is built under `inference_mode(False)`, since npu_fusion_attention saves it for backward and a mask first made
during a validation or sampling pass under `torch.inference_mode()` would be an inference tensor; a varlen batch of
more than 1024 sequences (the op's documented limit) is attended 1024 sequences at a time; in a bottom-right causal
call with more queries than keys, the first rows see no key (flash-attn writes 0, the op documents nothing): they
are zeros, left out of the op's call (in a varlen batch: NotImplementedError); and the MindIE-SD backend serves
only calls that need no backward (its runtime may pick an inference-only kernel) with a float scale (it rejects
others).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from ascend_port.core.options import ATTENTION_BACKENDS
from ascend_port.python.definitions import bound_name, insert_definitions

FLASH_HELPER = "_npu_flash_attn"
XFORMERS_HELPER = "_npu_memory_efficient_attention"
MASK_CACHE = "_NPU_ATTENTION_MASKS"
BACKENDS = ATTENTION_BACKENDS

_FLASH = '''\
{cache} = {{}}


def {name}(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
{pad}cu_seqlens_q=None, cu_seqlens_k=None, top_left=False):
    """flash-attn's attention on torch_npu.npu_fusion_attention (written by ascend-port, {credit}).

    q, k, v: (batch, seq, heads, head_dim), or (tokens, heads, head_dim) with cu_seqlens_q/k (varlen). Fewer
    key/value heads than query heads (GQA) need no repeat. Causal and sliding-window masks align bottom-right, as
    in flash-attn >= 2.1; top_left=True aligns a causal mask top-left (xformers' LowerTriangularMask).
    """
{import_torch}    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** -0.5  # the op's own default scale is 1.0
    left, right = window_size
{backend}    options = {{}}
    if cu_seqlens_q is None:
        if causal and not top_left and q.shape[1] > k.shape[1]:
            # bottom-right causal with more queries than keys: the first rows see no key and flash-attn writes 0
            # there (the op documents nothing for such rows), so they are left out of the call
            cut = q.shape[1] - k.shape[1]
            out = {name}(q[:, cut:], k, v, dropout_p, softmax_scale, causal, window_size)
            return {torch}.cat([out.new_zeros(out.shape[0], cut, *out.shape[2:]), out], dim=1)
        layout, head_num = "BSND", q.shape[2]
        lengths = []
    else:  # the op takes the cumulative sequence ends as host lists, at most 1024 sequences per call
        if len(cu_seqlens_q) > 1025:
            parts = []
            for i in range(0, len(cu_seqlens_q) - 1, 1024):
                cq, ck = cu_seqlens_q[i:i + 1025], cu_seqlens_k[i:i + 1025]
                parts.append({name}(q[cq[0]:cq[-1]], k[ck[0]:ck[-1]], v[ck[0]:ck[-1]], dropout_p,
{pad3}softmax_scale, causal, window_size, cq - cq[0], ck - ck[0], top_left))
            return {torch}.cat(parts)
        layout, head_num = "TND", q.shape[1]
        ends_q, ends_k = cu_seqlens_q.tolist(), cu_seqlens_k.tolist()
        options.update(actual_seq_qlen=ends_q[1:], actual_seq_kvlen=ends_k[1:])
        lengths = [(b - a, d - c) for a, b, c, d in zip(ends_q, ends_q[1:], ends_k, ends_k[1:])]
    if causal or left >= 0 or right >= 0:
        if causal and not top_left and any(sq > sk for sq, sk in lengths):
            # a sequence with more queries than keys: its first rows see no key (flash-attn writes 0 there), and
            # npu_fusion_attention documents nothing for such rows
            raise NotImplementedError("varlen causal attention with more queries than keys (fully masked rows)")
        mask = {cache}.get(q.device)
        if mask is None:  # the compressed 2048x2048 mask of the causal and band modes (True: masked out)
            with {torch}.inference_mode(False):  # the op saves it for backward: never an inference tensor
                mask = {torch}.triu({torch}.ones(2048, 2048, dtype={torch}.bool, device=q.device), diagonal=1)
            {cache}[q.device] = mask
        options["atten_mask"] = mask
        if left < 0 and right < 0:
            options["sparse_mode"] = 2 if top_left else 3
        else:  # band mode: keys from i - left to i + right around the bottom-right diagonal
            options.update(sparse_mode=4, pre_tockens=left if left >= 0 else 2147483647,
                           next_tockens=0 if causal else right if right >= 0 else 2147483647)
    return {torch_npu}.npu_fusion_attention(q, k, v, head_num, layout, scale=softmax_scale,
{pad2}keep_prob=1.0 - dropout_p, **options)[0]
'''

_MINDIESD = """\
    if not causal and dropout_p == 0.0 and left < 0 and right < 0 and cu_seqlens_q is None \\
            and k.shape[2] == q.shape[2] and isinstance(softmax_scale, float) \\
            and not ({torch}.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad)):
        # --attention-backend mindiesd, for calls that need no backward (its runtime may pick an inference-only
        # kernel) and have a float scale (it rejects others); training calls take npu_fusion_attention below
        from mindiesd import attention_forward

        return attention_forward(q, k, v, scale=softmax_scale)
"""

_XFORMERS = '''\
def {name}(q, k, v, p=0.0, scale=None, causal=False, top_left=False):
    """xformers.ops.memory_efficient_attention on NPU (written by ascend-port, {credit}): BMHK inputs, or BMK
    inputs as a single head; scale=None means q.shape[-1] ** -0.5, as in xformers."""
    if q.dim() == 3:
        out = {flash}(q.unsqueeze(2), k.unsqueeze(2), v.unsqueeze(2), p, scale, causal, top_left=top_left)
        return out.squeeze(2)
    return {flash}(q, k, v, p, scale, causal, top_left=top_left)
'''

# flash_attn.bert_padding's functions on plain indexing (rule NPU410, padding.py): the same signatures and results
# as flash-attn's (unpad_input: the five values of flash-attn >= 2.7).
_PAD_IMPORT = "    import torch as {torch}  # (the module does not import torch at its top level)\n\n"
PADDING_HELPERS = {
    "_npu_index_first_axis": '''\
def _npu_index_first_axis(x, indices):
    """flash_attn.bert_padding.index_first_axis (written by ascend-port, {credit}): the rows ``indices`` of x."""
    return x[indices]
''',
    "_npu_index_put_first_axis": '''\
def _npu_index_put_first_axis(values, indices, first_axis_dim):
    """flash_attn.bert_padding.index_put_first_axis (written by ascend-port, {credit}): ``values`` scattered to the
    rows ``indices`` of zeros with ``first_axis_dim`` rows."""
    out = values.new_zeros(first_axis_dim, *values.shape[1:])
    out[indices] = values
    return out
''',
    "_npu_unpad_input": '''\
def _npu_unpad_input(hidden_states, attention_mask, unused_mask=None):
    """flash_attn.bert_padding.unpad_input (written by ascend-port, {credit}): the tokens of (batch, seqlen, ...)
    where the mask (plus unused_mask) is set, their flat indices, cu_seqlens (int32, batch + 1), the longest
    sequence and the used lengths (int32): flash-attn >= 2.7's five values (< 2.7 returns the first four)."""
{import_torch}    masks = attention_mask if unused_mask is None else attention_mask + unused_mask
    seqlens = masks.sum(dim=-1, dtype={torch}.int32)
    indices = {torch}.nonzero(masks.flatten(), as_tuple=False).flatten()
    cu_seqlens = {torch}.nn.functional.pad({torch}.cumsum(seqlens, dim=0, dtype={torch}.int32), (1, 0))
    tokens = hidden_states.flatten(0, 1)[indices]
    return tokens, indices, cu_seqlens, seqlens.max().item(), attention_mask.sum(dim=-1, dtype={torch}.int32)
''',
    "_npu_pad_input": '''\
def _npu_pad_input(hidden_states, indices, batch, seqlen):
    """flash_attn.bert_padding.pad_input (written by ascend-port, {credit}): the tokens scattered back to
    (batch, seqlen, ...), zeros elsewhere."""
    out = hidden_states.new_zeros(batch * seqlen, *hidden_states.shape[1:])
    out[indices] = hidden_states
    return out.reshape(batch, seqlen, *hidden_states.shape[1:])
''',
}

# helper -> the helpers it calls (written first when missing)
DEPENDS = {FLASH_HELPER: (), XFORMERS_HELPER: (FLASH_HELPER,), **{name: () for name in PADDING_HELPERS}}


PRIVATE_TORCH = "_torch"


def helper_source(name: str, torch: str | None, torch_npu: str, backend: str, credit: str) -> str:
    """The source of one helper; ``torch`` is the module's name for torch (None: it does not import torch at its
    top level, so the helper imports it, under a private name: a plain `import torch`, even in a function, would
    make the module's other `torch.cuda...` code resolve on the next run and the port not idempotent),
    ``torch_npu`` its name for torch_npu (NPU100 adds `import torch_npu`); ``credit`` names the rules that wrote it
    in its docstring."""
    if name == XFORMERS_HELPER:
        return _XFORMERS.format(name=name, flash=FLASH_HELPER, credit=credit)
    if name in PADDING_HELPERS:
        private = _PAD_IMPORT.format(torch=PRIVATE_TORCH) if torch is None else ""
        torch = torch or PRIVATE_TORCH
        return PADDING_HELPERS[name].format(credit=credit, torch=torch, import_torch=private)
    if backend not in BACKENDS:
        raise ValueError(f"unknown attention backend {backend!r}: use {' or '.join(BACKENDS)}")
    return _FLASH.format(
        cache=MASK_CACHE,
        name=name,
        credit=credit,
        torch=torch or PRIVATE_TORCH,
        torch_npu=torch_npu,
        pad=" " * (len(name) + 5),
        pad2=" " * (len(torch_npu) + 33),  # continuation lines under the open paren
        pad3=" " * (len(name) + 30),
        import_torch="" if torch else f"    import torch as {PRIVATE_TORCH}  # (the module does not import torch)\n\n",
        backend=_MINDIESD.format(torch=torch or PRIVATE_TORCH) if backend == "mindiesd" else "",
    )


def insert_helpers(text: str, parse: Callable[[], ast.Module], backend: str, credits: Mapping[str, str]) -> str:
    """``text`` with the definitions of the helpers it calls but does not define at its top level, in dependency
    order (``parse()`` is its ``ast``; ``credits``: the helpers the caller writes, each with its rules, named in its
    docstring)."""

    def block(tree: ast.Module, missing: list[str]) -> str:
        torch, torch_npu = bound_name(tree, "torch"), bound_name(tree, "torch_npu") or "torch_npu"
        return "\n\n".join(helper_source(n, torch, torch_npu, backend, credits[n]) for n in DEPENDS if n in missing)

    return insert_definitions(text, parse, list(credits), block, requires=DEPENDS)
