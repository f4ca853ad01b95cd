import mmcv
# TODO(ascend-port): NPU807 [low] import NPUDataParallel (for MMDataParallel) from mmcv.device.npu: mmcv's own wrappers scatter to CUDA (mmcv >= 1.7 built for Ascend)
from mmcv.parallel import MMDataParallel, collate, scatter
from transformers import TrainingArguments

model = MMDataParallel(model, device_ids=[0])
# TODO(ascend-port): NPU807 [low] import NPUDistributedDataParallel (for MMDistributedDataParallel) from mmcv.device.npu: mmcv's own wrappers scatter to CUDA (mmcv >= 1.7 built for Ascend)
other = mmcv.parallel.MMDistributedDataParallel(model)
# TODO(ascend-port): NPU807 [low] tf32=cli.tf32: transformers raises ValueError for tf32=True without CUDA TF32 (every NPU host): pass False/None there (torch.npu.matmul.allow_hf32 = True is the Ascend analogue)
args = TrainingArguments(output_dir="out", tf32=cli.tf32)
