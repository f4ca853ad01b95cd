from transformers import Seq2SeqTrainingArguments, TrainingArguments
from trl import SFTConfig

args = TrainingArguments(output_dir="out", bf16=True, tf32=True)
seq = Seq2SeqTrainingArguments(
    output_dir="out",
    predict_with_generate=True,
    tf32=True,
)
sft = SFTConfig(tf32=True, output_dir="out", max_length=1024)
from_cli = TrainingArguments(output_dir="out", tf32=cli.tf32)
