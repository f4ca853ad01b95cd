"""Config switches that make the program build or call a CUDA kernel at start (NPU624), turned off in the YAML/JSON
configs and shell launch scripts that the port edits for another reason.

One table (``SWITCHES``); each row was read in the code that takes the switch: on, it imports a CUDA-built
extension or a CUDA-only package and stops without it; off, a plain PyTorch path runs. Switches whose fused path is
TorchScript or torch.compile (Megatron's `bias_activation_fusion`, `bias_dropout_fusion`,
`cross_entropy_loss_fusion`) run anywhere and are not here, nor are those the NPU serves: transformers'
`attn_implementation: flash_attention_2` (torch_npu's flash attention on an NPU host) and LLaMA-Factory's
`flash_attn: fa2` (its Ascend examples set it), nor `use_flash_attn`, whose flash-attn calls the port may have
rewritten to torch_npu in code it cannot see from the config.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.findings import todo_comment
from ascend_port.formats.shell_lexer import Word, lex
from ascend_port.formats.textedit import Edit, TextPort, newline_of

CUDA_KERNEL_SWITCH = rule(
    "NPU624",
    "cuda-kernel-switch",
    Confidence.MEDIUM,
    "Config switches that build or call a CUDA kernel at start (`gradient_accumulation_fusion: true`, "
    "`masked_softmax_fusion`, `--enable_xformers_memory_efficient_attention`) -> off, in files the port edits.",
    """
    Megatron's `gradient_accumulation_fusion` (Apex's `fused_weight_gradient_mlp_cuda`), `masked_softmax_fusion`
    (Megatron's `scaled_masked_softmax_cuda`), `apply_rope_fusion` (Transformer Engine or Apex),
    `persist_layer_norm` (Apex's persistent LayerNorm) and diffusers' `enable_xformers_memory_efficient_attention`
    (xformers) stop the program on an NPU host; off, the PyTorch path runs. A YAML `true` becomes `false` in the
    file's spelling, with a comment at the end of the line (above it where the line has one) naming what runs
    instead; JSON `true` becomes `false` (the finding says it); a shell flag is removed, the continuation lines kept
    valid, with a comment line above the command. Only in a config or launch script the port changes for another
    reason (a device, a backend): the file is the one meant for the NPU. Fusions compiled by TorchScript
    (`bias_activation_fusion`, `bias_dropout_fusion`) and switches an NPU serves (`attn_implementation:
    flash_attention_2`) stay.

    Before:
        dist_backend: nccl
        gradient_accumulation_fusion: true
    After:
        dist_backend: hccl
        gradient_accumulation_fusion: false  # TODO(ascend-port): NPU624 [medium] ...
    Stays (no other change in the file, and TorchScript fusions run anywhere):
        gradient_accumulation_fusion: true
        bias_dropout_fusion: true
    """,
    follows=("NPU6", "NPU8"),  # the edits that make a file one the port changes
    example_file="config.yaml",
)


@dataclass(frozen=True)
class Switch:
    """A switch that needs a CUDA kernel: its config keys and command-line flags, what it needs, what runs off."""

    keys: tuple[str, ...]  # config keys whose boolean true turns it on
    flags: tuple[str, ...]  # command-line flags (store_true: off unless given) that turn it on; removed
    needs: str
    instead: str
    source: str  # where the behaviour was read


SWITCHES: tuple[Switch, ...] = (
    Switch(
        ("gradient_accumulation_fusion",),
        (),
        "fused_weight_gradient_mlp_cuda, Apex's CUDA extension (Megatron raises RuntimeError without it)",
        "Megatron's weight-gradient matmul in PyTorch",
        "megatron-core 0.12 tensor_parallel/layers.py (ColumnParallelLinear.__init__)",
    ),
    Switch(
        ("masked_softmax_fusion",),
        (),
        "Megatron's CUDA softmax kernels (scaled_masked_softmax_cuda), imported at the first fp16/bf16 step",
        "torch.softmax",
        "megatron-core 0.12 fusions/fused_softmax.py (FusedScaleMaskSoftmax.forward_torch_softmax when off)",
    ),
    Switch(
        ("apply_rope_fusion",),
        (),
        "the fused RoPE of Transformer Engine or Apex (Megatron raises ValueError without them)",
        "Megatron's RoPE in PyTorch",
        "megatron-core 0.12 transformer/transformer_config.py (__post_init__)",
    ),
    Switch(
        ("persist_layer_norm",),
        (),
        "Apex's persistent LayerNorm kernel (without Apex, Megatron's torch LayerNorm asserts it is off)",
        "torch.nn.LayerNorm",
        "megatron-core 0.12 transformer/torch_norm.py (WrappedTorchNorm), fusions/fused_layer_norm.py",
    ),
    Switch(
        ("enable_xformers_memory_efficient_attention",),
        ("--enable_xformers_memory_efficient_attention", "--enable-xformers-memory-efficient-attention"),
        "xformers, which has no NPU build (diffusers' training scripts raise ValueError without it)",
        "diffusers' default attention (torch's scaled_dot_product_attention)",
        "diffusers examples/*/train_*.py (`if args.enable_xformers_memory_efficient_attention:` ... `raise "
        'ValueError("xformers is not available ...")`), a store_true flag',
    ),
)

_BY_KEY = {key: switch for switch in SWITCHES for key in switch.keys}
_BY_FLAG = {flag: switch for switch in SWITCHES for flag in switch.flags}
_FLAG_PREFILTER = re.compile("|".join(re.escape(flag) for flag in sorted(_BY_FLAG)))
OFF = {"true": "false", "True": "False", "TRUE": "FALSE"}  # YAML's spellings of true (and JSON's)
# Between two words of one command: blanks and backslash-newline continuations only.
_WORD_GAP = re.compile(r"[ \t]*(?:\\\r?\n[ \t]*)*")


def switch_for_key(key: object) -> Switch | None:
    return _BY_KEY.get(key) if isinstance(key, str) else None


def note(switch: Switch, what: str) -> str:
    """The finding and the comment: what was turned off, what it needs, what runs instead."""
    return f"{what}: needs {switch.needs}; {switch.instead} runs instead"


# --- shell launch scripts ---------------------------------------------------------------------------------------------


def port_shell_switches(port: TextPort, code: str) -> None:
    """Remove the flags of ``SWITCHES`` from the commands of a script the port edits (``port.edits``), each with a
    comment line above its command (never between continuation lines, which would end the command there)."""
    if not port.edits or not _FLAG_PREFILTER.search(code):
        return  # a script the port leaves alone is not edited for a switch alone
    lexed = lex(code)
    written: set[tuple[int, str]] = set()
    for words in lexed.commands:
        for k, word in enumerate(words):
            switch = _BY_FLAG.get(code[word.start : word.end])
            if k == 0 or word.redirect or switch is None:
                continue
            removal = _removal(code, words, k)
            flag = code[word.start : word.end]
            message = note(switch, f"{flag} removed")
            if removal is None:
                port.report(
                    CUDA_KERNEL_SWITCH, word.start, f"{message}; remove it by hand (its neighbours are not plain)"
                )
                continue
            above = max(s for s in lexed.safe_line_starts if s <= word.start)
            comment = todo_comment(CUDA_KERNEL_SWITCH, message)
            edits = [removal]
            if (above, comment) not in written:
                written.add((above, comment))
                edits.append(Edit(above, above, port.lines.indent_at(above) + comment + newline_of(code)))
            port.fix(CUDA_KERNEL_SWITCH, word.start, edits, message)


def _removal(code: str, words: list[Word], k: int) -> Edit | None:
    """The edit that removes ``words[k]`` and the blanks (continuations included) on one side of it: up to the next
    word (``--flag \\`` on a line of its own goes, the next line keeps its indent), else back to the word before
    (``cmd \\`` + ``--flag`` at the end becomes ``cmd``). None where other text lies on both sides."""
    word = words[k]
    if k + 1 < len(words) and _WORD_GAP.fullmatch(code, word.end, words[k + 1].start):
        return Edit(word.start, words[k + 1].start, "")
    if _WORD_GAP.fullmatch(code, words[k - 1].end, word.start):
        return Edit(words[k - 1].end, word.end, "")
    return None
