def device_strings(accelerator, devices):
    # the branch serves each listed device by its name: "npu" joins the list (no NPU branch in the module)
    if accelerator == "cpu":
        return [accelerator]
    elif accelerator in ["cuda", "npu", "mps"]:
        return [f"{accelerator}:{i}" for i in range(devices)]
    return None
