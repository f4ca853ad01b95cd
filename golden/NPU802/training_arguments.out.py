from transformers import Seq2SeqTrainingArguments, TrainingArguments
from trl import SFTConfig

args = TrainingArguments(output_dir="out", bf16=True)
seq = Seq2SeqTrainingArguments(
    output_dir="out",
    predict_with_generate=True,
)
sft = SFTConfig(output_dir="out", max_length=1024)
# TODO(ascend-port): NPU807 [low] tf32=cli.tf32: transformers raises ValueError for tf32=True without CUDA TF32 (every NPU host): pass False/None there (torch.npu.matmul.allow_hf32 = True is the Ascend analogue)
from_cli = TrainingArguments(output_dir="out", tf32=cli.tf32)
