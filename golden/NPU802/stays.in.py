from transformers import TrainingArguments

off = TrainingArguments(output_dir="out", tf32=False)
unset = TrainingArguments(output_dir="out", tf32=None)
mine = make_arguments(output_dir="out", tf32=True)
