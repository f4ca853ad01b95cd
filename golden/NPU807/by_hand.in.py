import mmcv
from mmcv.parallel import MMDataParallel, collate, scatter
from transformers import TrainingArguments

model = MMDataParallel(model, device_ids=[0])
other = mmcv.parallel.MMDistributedDataParallel(model)
args = TrainingArguments(output_dir="out", tf32=cli.tf32)
