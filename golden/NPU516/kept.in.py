import triton

CONFIG = {"multiprocessor_count": 4}
SMS = CONFIG["multiprocessor_count"]  # not the driver's properties


def sms(device: int) -> int:
    props = triton.runtime.driver.active.utils.get_device_properties(device)
    return props["max_shared_mem"]
