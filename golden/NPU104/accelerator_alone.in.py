# Where nothing in the module lets the accelerator be another device, its CUDA test moves to the NPU.
def device_count(accelerator, count_devices):
    if accelerator == "cuda":
        return count_devices()
    return 1
