"""Config switches that make the program build or call a CUDA kernel at start (NPU624), turned off in the YAML/JSON
configs and shell launch scripts that the port edits for another reason; the launch flags of the project's own
(`--xformers`, `--fp8`) where its code shows them safe to drop (PortOptions.launch_flags).

One table (``SWITCHES``); each row was read in the code that takes the switch: on, it imports a CUDA-built
extension or a CUDA-only package and stops without it; off, a plain PyTorch path runs. Switches whose fused path is
TorchScript or torch.compile (Megatron's `bias_activation_fusion`, `bias_dropout_fusion`,
`cross_entropy_loss_fusion`) run anywhere and are not here, nor are those the NPU serves: transformers'
`attn_implementation: flash_attention_2` (torch_npu's flash attention on an NPU host) and LLaMA-Factory's
`flash_attn: fa2` (its Ascend examples set it), nor `use_flash_attn`, whose flash-attn calls the port may have
rewritten to torch_npu in code it cannot see from the config. Megatron-LM's launch arguments turn four of these
fusions on unless told (``MEGATRON_DEFAULT_ON``): its launch scripts get the `--no-...` flags they do not give.
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
    valid, with a comment line above the command. Megatron-LM's launch arguments turn these fusions on unless told
    (`--no-gradient-accumulation-fusion`, `--no-masked-softmax-fusion`, `--no-persist-layer-norm`, and
    `--no-rope-fusion` where the script uses RoPE): a command that runs its entry point (`pretrain_gpt.py`, ...)
    gets the flags the script does not give anywhere, after the entry point, each with a comment line above the
    command. Only in a config or launch script the port changes for another reason (a device, a backend): the file
    is the one meant for the NPU. Fusions compiled by TorchScript
    (`bias_activation_fusion`, `bias_dropout_fusion`: no `--no-bias-gelu-fusion` is added) and switches an NPU
    serves (`attn_implementation: flash_attention_2`) stay, and so do precision choices (`--fp8-format`,
    LLaMA-Factory's `fp8: true`: off, the run trains in another precision than it was written for). The project's
    own `--xformers`, `--use-xformers`, `--fp8`, `--use-fp8` (xformers; Transformer Engine or torchao's float8) go
    only where its Python code shows what runs without them (read statically: rules/project/launch_flags.py): every
    definition `action="store_true"`, every `if` on it with a way on when off that does not raise; an `if`/`elif`
    chain that raises unless one of its flags is given and offers `--sdpa` gets `--sdpa` instead (musubi-tuner).
    Elsewhere (a chain with no plain flag, `assert args.fp8`, a flag not store_true, the project's code not in the
    run) they stay, with no finding; so does a config's `attention: flash`, a string whose plain value each program
    names its own way (`sdpa`, `torch`, `stock`).

    Before:
        dist_backend: nccl
        gradient_accumulation_fusion: true
    After:
        dist_backend: hccl
        gradient_accumulation_fusion: false  # TODO(ascend-port): NPU624 [medium] ...
    Before (train.py defines `--xformers` store_true and raises unless `--sdpa` or `--xformers` is given):
        torchrun train.py --dist-backend nccl --xformers
    After:
        # TODO(ascend-port): NPU624 [medium] --xformers -> --sdpa: needs xformers, ...
        torchrun train.py --dist-backend hccl --sdpa
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

# What a launch flag of the project's own calls (rules/project/launch_flags.CUDA_FLAGS).
_LAUNCH_NEEDS = {
    "xformers": "xformers, which has no NPU build",
    "fp8": "an FP8 kernel library (Transformer Engine, torchao's float8) and a CUDA GPU with FP8 units",
}
_BY_KEY = {key: switch for switch in SWITCHES for key in switch.keys}
_BY_FLAG = {flag: switch for switch in SWITCHES for flag in switch.flags}
_FLAG_PREFILTER = re.compile("|".join(re.escape(flag) for flag in sorted(_BY_FLAG)))
OFF = {"true": "false", "True": "False", "TRUE": "FALSE"}  # YAML's spellings of true (and JSON's)
# Between two words of one command: blanks and backslash-newline continuations only.
_WORD_GAP = re.compile(r"[ \t]*(?:\\\r?\n[ \t]*)*")


@dataclass(frozen=True)
class DefaultOn:
    """A Megatron-LM fusion that is on unless the launch arguments turn it off (`--no-...`), and that stops the
    program without its CUDA kernel: the port adds the flag where the command does not give it."""

    flag: str
    switch: Switch
    only_with: re.Pattern[str] | None = None  # it matters only where the script also says this (else None: always)


# Read in Megatron-LM's training/arguments.py (core_r0.12): these `--no-...` flags are `store_false` (or, for the
# layer norm, `store_true` read as `persist_layer_norm = not args.no_persist_layer_norm`), so the fusion is on unless
# given. Megatron-LM's validate_args turns rope fusion off itself where the position embedding is not RoPE. The
# fusions compiled by TorchScript/torch.compile (`--no-bias-gelu-fusion`, `--no-bias-swiglu-fusion`,
# `--no-bias-dropout-fusion`) run anywhere and are left on.
MEGATRON_DEFAULT_ON: tuple[DefaultOn, ...] = (
    DefaultOn("--no-gradient-accumulation-fusion", _BY_KEY["gradient_accumulation_fusion"]),
    DefaultOn("--no-masked-softmax-fusion", _BY_KEY["masked_softmax_fusion"]),
    DefaultOn("--no-persist-layer-norm", _BY_KEY["persist_layer_norm"]),
    DefaultOn(
        "--no-rope-fusion",
        _BY_KEY["apply_rope_fusion"],
        re.compile(r"--position-embedding-type(?:=|[ \t]+)[\"']?rope\b|--use-rotary-position-embeddings"),
    ),
)
# A Megatron-LM entry point (pretrain_gpt.py, pretrain_bert.py, pretrain_t5.py, pretrain_mamba.py, ...), as a word.
_MEGATRON_ENTRY = re.compile(r"(?:^|[/\"'])pretrain_\w+\.py[\"']?$")
_NOT_RUNS = frozenset(("echo", "printf", "ls", "cat", "cp", "test", "[", "wget", "curl"))  # commands that name it
_CONTINUATION = re.compile(r"[ \t]*\\(\r?\n)([ \t]*)")


def switch_for_key(key: object) -> Switch | None:
    return _BY_KEY.get(key) if isinstance(key, str) else None


def note(switch: Switch, what: str) -> str:
    """The finding and the comment: what was turned off, what it needs, what runs instead."""
    return f"{what}: needs {switch.needs}; {switch.instead} runs instead"


# --- shell launch scripts ---------------------------------------------------------------------------------------------


def port_shell_switches(port: TextPort, code: str) -> None:
    """Remove the flags of ``SWITCHES`` from the commands of a script the port edits (``port.edits``), each with a
    comment line above its command (never between continuation lines, which would end the command there)."""
    launch = {
        flag: (plain, _launch_switch(calls, plain, where)) for flag, plain, calls, where in port.options.launch_flags
    }
    if not port.edits or not (_FLAG_PREFILTER.search(code) or "pretrain_" in code or any(f in code for f in launch)):
        return  # a script the port leaves alone is not edited for a switch alone
    lexed = lex(code)
    written: set[tuple[int, str]] = set()
    _megatron_defaults(port, code, lexed.commands, lexed.safe_line_starts)
    for words in lexed.commands:
        given = {code[w.start : w.end] for w in words}
        for k, word in enumerate(words):
            flag = code[word.start : word.end]
            instead, switch = launch.get(flag, ("", _BY_FLAG.get(flag)))
            if k == 0 or word.redirect or switch is None:
                continue
            if instead and instead not in given:  # (the project's code stops without a flag: the plain one)
                message = note(switch, f"{flag} -> {instead}")
                removal: Edit | None = Edit(word.start, word.end, instead)
                given.add(instead)  # (two spellings of the flag in one command: one plain flag)
            else:
                message = note(switch, f"{flag} removed")
                removal = _removal(code, words, k)
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


def _launch_switch(calls: str, plain: str, where: str) -> Switch:
    """The switch of a launch flag of the project's own (PortOptions.launch_flags), for its note: what it calls,
    and what runs without it (the path of its program ``where`` when off, or the plain flag that replaces it)."""
    if plain:
        instead = f"torch's scaled_dot_product_attention ({where}'s {plain})"
    else:
        instead = f"the path {where} takes without it"
        if calls == "fp8":
            instead += " (the precision it is given otherwise)"
    return Switch((), (), _LAUNCH_NEEDS[calls], instead, where)


def _megatron_defaults(port: TextPort, code: str, commands: list[list[Word]], line_starts: list[int]) -> None:
    """Add the `--no-...` flag of each fusion of ``MEGATRON_DEFAULT_ON`` that the script does not give (anywhere: in
    the command, an array or a variable) to each command that runs a Megatron-LM entry point, right after it (on
    lines of their own where a continuation follows it), each with a comment line above the command."""
    missing = [
        d for d in MEGATRON_DEFAULT_ON if d.flag not in code and (d.only_with is None or d.only_with.search(code))
    ]
    if not missing:
        return
    newline = newline_of(code)
    for words in commands:
        entry = next((w for w in words if not w.redirect and _MEGATRON_ENTRY.search(code[w.start : w.end])), None)
        if entry is None or code[words[0].start : words[0].end] in _NOT_RUNS:
            continue
        above = max(s for s in line_starts if s <= entry.start)
        follows = _CONTINUATION.match(code, entry.end)
        for default in missing:
            key = default.switch.keys[0]
            message = note(default.switch, f"{default.flag} added (Megatron-LM turns {key} on unless told)")
            comment = port.lines.indent_at(above) + todo_comment(CUDA_KERNEL_SWITCH, message) + newline
            if follows is not None:  # `pretrain_gpt.py \` + newline: a line of its own, with the next line's indent
                added = Edit(
                    follows.start(2), follows.start(2), f"{follows.group(2)}{default.flag} \\{follows.group(1)}"
                )
            else:
                added = Edit(entry.end, entry.end, f" {default.flag}")
            port.fix(CUDA_KERNEL_SWITCH, entry.start, [Edit(above, above, comment), added], message)


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
