"""Shell scripts: the command-line forms of NPU802 (`--tf32 True`) and NPU806 (lm-eval's `--device`), declared in
rules/frameworks.py with their Python forms; rules/project/shell.py calls ``port_shell_flags`` for each command."""

from __future__ import annotations

from ascend_port.formats.shell_lexer import Word
from ascend_port.formats.textedit import Edit, TextPort
from ascend_port.rules.frameworks import LM_EVAL_DEVICE, TRANSFORMERS_TF32, model_args_device

_TRUE = ("True", "true", "1")


def port_shell_flags(port: TextPort, base: int, code: str, args: list[Word], command: int) -> None:
    """`--tf32 True` -> `--tf32 False` (NPU802); lm-eval's `--device cuda`/`npu` gets `:0` (NPU806: NPU615 turns
    the `cuda` into `npu`, this inserts after it, so the two edits never overlap) and its `--model_args
    ...,device=cuda` names `npu:0`."""
    words = [code[w.start : w.end] for w in args]
    program = words[command].rsplit("/", 1)[-1] if command < len(words) else ""
    module = words[words.index("-m") + 1] if "-m" in words[:-1] else ""
    lm_eval = program in ("lm_eval", "lm-eval") or module == "lm_eval"
    for k, text in enumerate(words):
        flag, value_start, value = text, None, None
        if text.startswith("--") and "=" in text:
            flag, value = text.split("=", 1)
            value_start = args[k].start + len(flag) + 1
        elif k + 1 < len(words):
            value_start, value = args[k + 1].start, words[k + 1]
        if value is None or value_start is None:
            continue
        at = base + value_start
        if flag == "--tf32" and value in _TRUE:
            off = {"True": "False", "true": "false", "1": "0"}[value]  # (in the spelling the script uses)
            message = f"--tf32 {value} -> {off}: transformers raises ValueError without CUDA TF32 (an NPU host)"
            port.fix(TRANSFORMERS_TF32, at, [Edit(at, at + len(value), off)], message)
        elif lm_eval and flag == "--device" and value in ("cuda", "npu"):
            port.fix(
                LM_EVAL_DEVICE, at, [Edit(at + len(value), at + len(value), ":0")], f"lm-eval --device {value} -> npu:0"
            )
        elif lm_eval and flag == "--model_args" and (found := model_args_device(value.strip("'\""))):
            start, end, new = found
            at += 1 if value[:1] in "'\"" else 0
            message = f"lm-eval --model_args device={value.strip(chr(39) + chr(34))[start:end]} -> device={new}"
            port.fix(LM_EVAL_DEVICE, at + start, [Edit(at + start, at + end, new)], message)
