from mmcv.parallel import collate
from mmengine.model import MMDistributedDataParallel

model = MMDistributedDataParallel(module=model)
