from mmcv.device.npu import NPUDataParallel as MMDataParallel, NPUDistributedDataParallel as MMDistributedDataParallel


def wrap(model, distributed, local_rank):
    if distributed:
        return MMDistributedDataParallel(model.npu(), device_ids=[local_rank], broadcast_buffers=False)
    return MMDataParallel(model.npu(0), device_ids=[0])
