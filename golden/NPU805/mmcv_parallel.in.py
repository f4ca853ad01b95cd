from mmcv.parallel import MMDataParallel, MMDistributedDataParallel


def wrap(model, distributed, local_rank):
    if distributed:
        return MMDistributedDataParallel(model.cuda(), device_ids=[local_rank], broadcast_buffers=False)
    return MMDataParallel(model.cuda(0), device_ids=[0])
