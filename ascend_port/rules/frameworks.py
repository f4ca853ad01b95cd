"""NPU800-NPU807: libraries that take device, accelerator or backend names (Lightning, transformers, bitsandbytes,
mmcv, lm-eval). What each accepts on Ascend, and the way forward, is one table: ``data/library_support.json``
(``core/library_support.py``), which the dependency matrix reads too."""

from __future__ import annotations

import re

import libcst as cst

from ascend_port.core import library_support
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.names import build_dotted, dotted, names_in
from ascend_port.python.scopes import Trigger, imported
from ascend_port.python.transformer import PortTransformer

MEDIUM, LOW = Confidence.MEDIUM, Confidence.LOW

LIGHTNING_ACCELERATOR = rule(
    "NPU800",
    "lightning-accelerator",
    LOW,
    'Lightning `Trainer`/`Fabric` with `accelerator="cuda"`/`"gpu"`/`"auto"` (or none): TODO, never `"npu"`.',
    """
    Lightning has no built-in Ascend accelerator: `accelerator="npu"` is rejected as an invalid accelerator name
    (upstream support, Lightning-AI/pytorch-lightning#19498, was not merged), and `"auto"`, the default, picks the
    CPU on an NPU host without a word. So the device rules never turn a Lightning accelerator into `"npu"` (in a
    module that imports Lightning, `accelerator` is not a device name to them), and each `Trainer`/`Fabric` call
    whose accelerator is `cuda`, `gpu`, `auto`, absent, or a variable gets a TODO naming the route: a custom
    Accelerator for torch.npu, registered or passed as an instance. YAML configs: NPU623.

    Before:
        import lightning as L
        fabric = L.Fabric(accelerator="cuda", devices=2)
    After:
        import lightning as L
        # TODO(ascend-port): NPU800 [low] accelerator="cuda": Lightning has no built-in Ascend accelerator and rejects ...
        fabric = L.Fabric(accelerator="cuda", devices=2)
    """,
)
LIGHTNING_CUDA_ONLY = rule(
    "NPU801",
    "lightning-cuda-only",
    LOW,
    "Lightning's CUDA-only pieces (`CUDAAccelerator`, `_RunIf(min_cuda_gpus=...)`, `BitsandbytesPrecision`): TODO.",
    """
    `CUDAAccelerator.is_available()`/`auto_device_count()` count CUDA GPUs (none on an NPU host), a test marked
    `_RunIf(min_cuda_gpus=N)` is skipped there, and `BitsandbytesPrecision` runs bitsandbytes' CUDA kernels. Each
    use gets a TODO with the NPU counterpart.

    Before:
        from lightning.fabric.accelerators import CUDAAccelerator
        n = CUDAAccelerator.auto_device_count()
    After:
        from lightning.fabric.accelerators import CUDAAccelerator
        # TODO(ascend-port): NPU801 [low] CUDAAccelerator counts CUDA GPUs (none on an NPU host): ...
        n = CUDAAccelerator.auto_device_count()
    """,
)
TRANSFORMERS_TF32 = rule(
    "NPU802",
    "transformers-tf32",
    MEDIUM,
    "`TrainingArguments(tf32=True)` (and trl's configs) raise without CUDA TF32: the argument is dropped.",
    """
    transformers raises `ValueError: --tf32 requires Ampere or a newer GPU arch` when `tf32=True` and CUDA TF32 is
    not available, which is the case on every NPU host. Dropping the literal `tf32=True` leaves fp32 matmuls
    exact (in shell scripts, `--tf32 True` becomes `--tf32 False`); `torch.npu.matmul.allow_hf32 = True` is the
    Ascend analogue if the speed matters. A `tf32=` that is not a literal gets NPU807's TODO; `tf32=False` stays
    (it does nothing without CUDA).

    Before:
        from transformers import TrainingArguments
        args = TrainingArguments(output_dir="out", bf16=True, tf32=True)
    After:
        from transformers import TrainingArguments
        args = TrainingArguments(output_dir="out", bf16=True)
    """,
)
FLASH_ATTENTION_2 = rule(
    "NPU803",
    "transformers-flash-attention-2",
    LOW,
    '`attn_implementation="flash_attention_2"`: TODO, it runs on NPUs only with a recent transformers.',
    """
    transformers runs `flash_attention_2` on Ascend through its NPU integration (`integrations/
    npu_flash_attention.py`, torch_npu's `npu_fusion_attention`), added in 4.51 and working again from 4.56;
    older releases ask for the flash-attn package, which has no NPU build. A run over a project reads the lowest
    transformers its requirements files, pyproject.toml or setup.py allow: from 4.56 on nothing is reported; older,
    or not pinned at all, the call or dict entry gets a TODO and nothing is rewritten, since `"sdpa"`, which runs
    with every release, is wrong with padding-free packing (which needs flash_attention_2).

    Before:
        model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_2")
    After:
        # TODO(ascend-port): NPU803 [low] attn_implementation="flash_attention_2" runs on NPUs with transformers ...
        model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_2")
    """,
)
BITSANDBYTES = rule(
    "NPU804",
    "bitsandbytes-quantization",
    LOW,
    "bitsandbytes quantization and 8-bit optimizers (`load_in_8bit`, `BitsAndBytesConfig`, `bnb.optim.*`): TODO.",
    """
    `load_in_8bit=`/`load_in_4bit=`, `BitsAndBytesConfig(...)`, peft's `prepare_model_for_int8_training`/
    `prepare_model_for_kbit_training` and `bitsandbytes.optim`/`bitsandbytes.nn` classes run bitsandbytes' CUDA
    kernels (its PyPI wheels have no NPU backend). Each use gets a TODO naming the Ascend route (bf16 weights,
    torch_npu's quantized matmuls, torch_npu fused optimizers); NPU504 marks the import.

    Before:
        model = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=True)
    After:
        # TODO(ascend-port): NPU804 [low] load_in_8bit: bitsandbytes is CUDA-only here: ...
        model = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=True)
    """,
)
MMCV_DATA_PARALLEL = rule(
    "NPU805",
    "mmcv-data-parallel",
    MEDIUM,
    "mmcv `MMDataParallel`/`MMDistributedDataParallel` -> `mmcv.device.npu.NPUDataParallel`/"
    "`NPUDistributedDataParallel`.",
    """
    mmcv's wrappers scatter the batch to CUDA devices; mmcv (1.7 and later 1.x, built for Ascend) has NPU
    subclasses in `mmcv.device.npu` that copy it to the NPU instead. `from mmcv.parallel import MMDataParallel`
    imports the NPU class under the same name, so the code that uses it stays as it is. An import that also
    names other things, and `mmcv.parallel.MMDataParallel` written out, get NPU807's TODO. A module that imports
    `mmcv.device.npu` itself (mmdet's `build_dp`, which picks the wrapper by device) is left as it is.

    Before:
        from mmcv.parallel import MMDataParallel
        model = MMDataParallel(model, device_ids=[0])
    After:
        from mmcv.device.npu import NPUDataParallel as MMDataParallel
        model = MMDataParallel(model, device_ids=[0])
    """,
)
LM_EVAL_DEVICE = rule(
    "NPU806",
    "lm-eval-device",
    MEDIUM,
    'lm-eval\'s `device="cuda"` -> `"npu:0"` (lm-eval wants an indexed NPU device, not `"npu"`).',
    """
    lm-evaluation-harness's HF model takes `npu:0`-style devices on Ascend (EleutherAI/lm-evaluation-harness#1886);
    the bare `npu` that the device rules would write is not accepted. `device="cuda"` (or `"npu"`) of
    `lm_eval.simple_evaluate` and `HFLM` becomes `"npu:0"`, and `"cuda:N"` becomes `"npu:N"`, as does the
    `device=cuda` of a literal `model_args="pretrained=...,device=cuda"`; in shell scripts, `lm_eval ... --device
    cuda` gets its `:0` (NPU615 writes the `npu`) and `--model_args ...,device=cuda` becomes `device=npu:0`.

    Before:
        import lm_eval
        results = lm_eval.simple_evaluate(model="hf", model_args=args, device="cuda")
    After:
        import lm_eval
        results = lm_eval.simple_evaluate(model="hf", model_args=args, device="npu:0")
    """,
)

BY_HAND = rule(
    "NPU807",
    "library-setting-by-hand",
    LOW,
    "What NPU802 and NPU805 cannot rewrite (a `tf32=` that is not a literal, mmcv wrappers imported with other "
    "names or written out): TODO.",
    """
    A `tf32=` computed at run time (`tf32=args.tf32`) raises on an NPU host when it is true; an import of
    `MMDataParallel` beside other names of `mmcv.parallel`, or `mmcv.parallel.MMDataParallel` written out, needs
    the NPU wrapper imported by hand. Each gets a TODO.

    Before:
        from transformers import TrainingArguments
        args = TrainingArguments(output_dir="out", tf32=cli.tf32)
    After:
        from transformers import TrainingArguments
        # TODO(ascend-port): NPU807 [low] tf32=cli.tf32: transformers raises ValueError for tf32=True without CUDA ...
        args = TrainingArguments(output_dir="out", tf32=cli.tf32)
    """,
)

_CUDA_ACCELERATORS = ("cuda", "gpu", "auto")
_LIGHTNING_CUDA_ONLY = {
    "CUDAAccelerator": "CUDAAccelerator counts CUDA GPUs (none on an NPU host): use torch.npu.is_available()/"
    "torch.npu.device_count(), or the custom NPU Accelerator's methods",
    "BitsandbytesPrecision": 'BitsandbytesPrecision runs bitsandbytes\' CUDA kernels: use precision="bf16-mixed" '
    "(torch_npu's quantized matmuls for low-bit weights)",
}
_RUN_IF_TODO = (
    "_RunIf(min_cuda_gpus=...) skips this test on an NPU host (no CUDA GPUs): mark it for NPUs by hand "
    "(e.g. pytest.mark.skipif(torch.npu.device_count() < N, ...))"
)
_TF32_ARGUMENTS = ("TrainingArguments",)  # transformers' TrainingArguments, Seq2SeqTrainingArguments, ...
_TF32_TODO = (
    "tf32={value}: transformers raises ValueError for tf32=True without CUDA TF32 (every NPU host): pass "
    "False/None there (torch.npu.matmul.allow_hf32 = True is the Ascend analogue)"
)
_FA2_TODO = (
    'attn_implementation="flash_attention_2" runs on NPUs with transformers >= {since} (its NPU integration, '
    'npu_fusion_attention): with an older transformers use "sdpa" (not with padding-free packing) or upgrade'
)
_BNB_CALLS = ("BitsAndBytesConfig", "prepare_model_for_int8_training", "prepare_model_for_kbit_training")
_BNB_KEYWORDS = ("load_in_8bit", "load_in_4bit")
_MMCV = {"MMDataParallel": "NPUDataParallel", "MMDistributedDataParallel": "NPUDistributedDataParallel"}
_MODEL_ARGS_DEVICE = re.compile(r"(?:^|,)\s*device=(?P<value>(?P<kind>cuda|npu)(?::(?P<index>\d+))?)\s*(?=,|$)")


def model_args_device(model_args: str) -> tuple[int, int, str] | None:
    """Where lm-eval's ``model_args`` string (``pretrained=gpt2,device=cuda:1``) names a CUDA (or bare npu) device,
    and the NPU device it becomes: (start, end, ``npu:1``); None when it names none (or ``npu:N`` already)."""
    m = _MODEL_ARGS_DEVICE.search(model_args)
    if m is None or (m.group("kind") == "npu" and m.group("index")):
        return None
    return m.start("value"), m.end("value"), f"npu:{m.group('index') or 0}"


_LM_EVAL_CALLS = {
    "lm_eval.simple_evaluate",
    "lm_eval.evaluator.simple_evaluate",
    "lm_eval.models.huggingface.HFLM",
    "lm_eval.models.HFLM",
}


def _string(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _keyword(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _without(call: cst.Call, drop: cst.Arg) -> cst.Call:
    """``call`` without the argument ``drop``; the commas stay right in one-line and one-per-line styles."""
    args = list(call.args)
    index = next(i for i, a in enumerate(args) if a is drop)
    del args[index]
    if index == len(args) and args:  # the last one went: its predecessor takes its comma (or none)
        args[-1] = args[-1].with_changes(comma=drop.comma)
    return call.with_changes(args=args)


def _mmcv_todo(names: list[str]) -> str:
    wanted = ", ".join(f"{_MMCV[n]} (for {n})" for n in names)
    return f"import {wanted} from mmcv.device.npu: mmcv's own wrappers scatter to CUDA (mmcv >= 1.7 built for Ascend)"


def _lightning_way() -> str:
    return library_support.library("lightning").way


class FrameworkTransformer(PortTransformer):
    """NPU800-NPU806."""

    TRIGGERS = (
        # (Lightning's entry points: every package of Lightning's says so, and a module that never does calls none)
        Trigger(r"\b(?:Trainer|Fabric)\b", also=("lightning",)),
        r"CUDAAccelerator",
        r"BitsandbytesPrecision",
        r"\b_?RunIf\b",
        r"\btf32\b",
        r"flash_attention_2",
        r"load_in_[48]bit",
        r"BitsAndBytesConfig",
        r"prepare_model_for_(?:int8|kbit)_training",
        Trigger(r"bitsandbytes|\bbnb\b", imports=("bitsandbytes",)),
        # (a class imported by its name, `from bitsandbytes.nn import Int8Params`: every name of theirs is capitalised)
        Trigger(r"\b[A-Z]\w*", scope=imported("bitsandbytes.nn", "bitsandbytes.optim"), imports=("bitsandbytes",)),
        r"MMDataParallel|MMDistributedDataParallel",
        r"lm_eval|\bHFLM\b",
    )
    RULES = (
        LIGHTNING_ACCELERATOR,
        LIGHTNING_CUDA_ONLY,
        TRANSFORMERS_TF32,
        FLASH_ATTENTION_2,
        BITSANDBYTES,
        MMCV_DATA_PARALLEL,
        LM_EVAL_DEVICE,
        BY_HAND,
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # Names that are no uses of what they resolve to: those of import statements, an attribute's own name
        # (`RMSprop` of `torch.optim.RMSprop`, where a function imports bitsandbytes' RMSprop), and the classes of a
        # type check (`isinstance(opt, bnb.optim.AdamW)` runs none of the library's code).
        self._not_uses: set[int] = set()

    # --- imports ---------------------------------------------------------------------------------------------------

    def visit_Import(self, node: cst.Import) -> None:
        self._not_uses |= names_in(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._not_uses |= names_in(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._not_uses.add(id(node.attr))

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        if original.relative or original.module is None or dotted(original.module) != "mmcv.parallel":
            return updated
        if any(path.startswith("mmcv.device.npu.") for path in self.ctx.imports.aliases.values()):
            return updated  # the module already picks mmcv's NPU wrappers itself (mmdet's build_dp)
        if isinstance(updated.names, cst.ImportStar):
            return updated
        names = [(a, a.name.value) for a in updated.names if isinstance(a.name, cst.Name)]
        wrappers = [name for _, name in names if name in _MMCV]
        if not wrappers:
            return updated
        if len(wrappers) < len(updated.names):
            self.todo(BY_HAND, original, _mmcv_todo(wrappers))
            return updated
        aliases = [
            a.with_changes(name=cst.Name(_MMCV[name]), asname=a.asname or cst.AsName(name=cst.Name(name)))
            for a, name in names
        ]
        replacement = updated.with_changes(module=build_dotted("mmcv.device.npu"), names=aliases)
        message = "from mmcv.parallel import ... -> mmcv.device.npu's NPU wrappers (same local names)"
        return self.fix(MMCV_DATA_PARALLEL, original, replacement, message) or updated

    # --- uses ------------------------------------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in ("isinstance", "issubclass") and len(node.args) > 1:
            self._not_uses |= names_in(node.args[1].value)
        qualified = self.ctx.imports.resolve(node.func)
        if qualified in _LM_EVAL_CALLS and (device := _keyword(node, "device")) and self.enabled(LM_EVAL_DEVICE):
            self.ctx.claim(
                device.value, by=LM_EVAL_DEVICE
            )  # (the device rules would write "npu", which lm-eval refuses)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        qualified = self.ctx.imports.resolve(original.func) or ""
        last = qualified.rsplit(".", 1)[-1] if qualified else (dotted(original.func) or "").rsplit(".", 1)[-1]
        if library_support.is_lightning_entry(qualified):
            self._lightning_accelerator(original)
        elif last in ("_RunIf", "RunIf") and _keyword(original, "min_cuda_gpus") is not None:
            self.todo(LIGHTNING_CUDA_ONLY, original, _RUN_IF_TODO)
        elif qualified.startswith(("transformers.", "trl.")) and (
            last.endswith(_TF32_ARGUMENTS) or (qualified.startswith("trl.") and last.endswith("Config"))
        ):
            updated = self._tf32(original, updated)
        elif qualified in _LM_EVAL_CALLS:
            updated = self._lm_eval_device(original, updated)
        quantized = [last] if qualified and last in _BNB_CALLS else []
        for arg in original.args:
            if arg.keyword is None:
                continue
            name = arg.keyword.value
            if name in _BNB_KEYWORDS and not (isinstance(arg.value, cst.Name) and arg.value.value in ("False", "None")):
                quantized.append(name)
            elif name == "attn_implementation" and _string(arg.value) == "flash_attention_2":
                self._flash_attention_2(original)
        if quantized:  # one TODO for the call, however many of its parts are bitsandbytes'
            self.todo(BITSANDBYTES, original, f"{', '.join(quantized)}: {library_support.library('bitsandbytes').way}")
        return updated

    def leave_DictElement(self, original: cst.DictElement, updated: cst.DictElement) -> cst.DictElement:
        if _string(original.key) == "attn_implementation" and _string(original.value) == "flash_attention_2":
            self._flash_attention_2(original)
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        self._cuda_only_use(original)
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        self._cuda_only_use(original)
        return updated

    def _cuda_only_use(self, node: cst.Name | cst.Attribute) -> None:
        if id(node) in self._not_uses:
            return
        qualified = self.ctx.imports.resolve(node)
        if qualified is None:
            return
        head, _, last = qualified.rpartition(".")
        if last in _LIGHTNING_CUDA_ONLY and head.split(".")[0] in library_support.LIGHTNING_PACKAGES:
            self.todo(LIGHTNING_CUDA_ONLY, node, _LIGHTNING_CUDA_ONLY[last])
        elif head == "mmcv.parallel" and last in _MMCV and isinstance(node, cst.Attribute):
            self.todo(BY_HAND, node, _mmcv_todo([last]))
        elif head in ("bitsandbytes.optim", "bitsandbytes.nn"):
            self.todo(BITSANDBYTES, node, f"{qualified}: {library_support.library('bitsandbytes').way}")

    # --- one library each ------------------------------------------------------------------------------------------

    def _lightning_accelerator(self, call: cst.Call) -> None:
        if any(a.star == "**" for a in call.args):
            return  # the accelerator may be in **kwargs
        arg = _keyword(call, "accelerator")
        if arg is None:
            what = 'accelerator defaults to "auto", which picks the CPU on an NPU host'
        elif (value := _string(arg.value)) is not None:
            if value.lower().split(":")[0] not in _CUDA_ACCELERATORS:
                return  # "cpu", "tpu", or an accelerator registered under its own name
            what = f"accelerator={_code(arg.value)}" + (" picks the CPU on an NPU host" if value == "auto" else "")
        elif isinstance(arg.value, cst.Call):
            return  # an Accelerator instance
        else:
            what = f"accelerator={_code(arg.value)}"
        message = f'{what}: Lightning has no built-in Ascend accelerator and rejects "npu": {_lightning_way()}'
        self.todo(LIGHTNING_ACCELERATOR, call, message)

    def _tf32(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        arg = _keyword(updated, "tf32")
        if arg is None or (isinstance(arg.value, cst.Name) and arg.value.value in ("False", "None")):
            return updated
        if isinstance(arg.value, cst.Name) and arg.value.value == "True":
            message = "tf32=True dropped: transformers raises ValueError without CUDA TF32 (an NPU host)"
            return self.fix(TRANSFORMERS_TF32, original, _without(updated, arg), message) or updated
        self.todo(BY_HAND, original, _TF32_TODO.format(value=_code(arg.value)))
        return updated

    def _lm_eval_device(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        updated = self._lm_eval_model_args(original, updated)
        arg = _keyword(updated, "device")
        value = _string(arg.value) if arg is not None else None
        if arg is None or value is None or not isinstance(arg.value, cst.SimpleString):
            return updated
        kind, _, index = value.partition(":")
        if kind not in ("cuda", "npu") or (index and not index.isdigit()) or (kind == "npu" and index):
            return updated
        new = f"npu:{index or 0}"
        quote = arg.value.quote
        replacement = arg.with_changes(value=arg.value.with_changes(value=f"{arg.value.prefix}{quote}{new}{quote}"))
        call = updated.with_changes(args=[replacement if a is arg else a for a in updated.args])
        return self.fix(LM_EVAL_DEVICE, original, call, f'lm-eval device "{value}" -> "{new}"') or updated

    def _lm_eval_model_args(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """``model_args="pretrained=gpt2,device=cuda"``: its device, as the ``device=`` argument's."""
        arg = _keyword(updated, "model_args")
        if arg is None or not isinstance(arg.value, cst.SimpleString):
            return updated
        body = arg.value.value[len(arg.value.prefix) + len(arg.value.quote) : -len(arg.value.quote)]
        found = model_args_device(body)
        if found is None:
            return updated
        start, end, new = found
        value = arg.value.value
        at = len(arg.value.prefix) + len(arg.value.quote)
        string = arg.value.with_changes(value=value[: at + start] + new + value[at + end :])
        call = updated.with_changes(args=[arg.with_changes(value=string) if a is arg else a for a in updated.args])
        message = f"lm-eval model_args device={body[start:end]} -> device={new}"
        return self.fix(LM_EVAL_DEVICE, original, call, message) or updated

    def _flash_attention_2(self, node: cst.CSTNode) -> None:
        since = library_support.flash_attention_npu_since()
        pin = self.ctx.options.transformers_pin
        if pin and library_support.at_least(pin, since):
            return  # the project's transformers runs flash_attention_2 on NPUs (its NPU integration)
        message = _FA2_TODO.format(since=".".join(map(str, since)))
        if pin:
            message += f" (the project's requirements allow transformers {pin})"
        self.todo(FLASH_ATTENTION_2, node, message)
