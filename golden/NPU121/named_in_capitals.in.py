# The device model reads device names in any case ("CUDA" is CUDA): a choice that names it only in capitals is one
# over devices all the same, whatever else its statement says.
import torch


def device_label():
    return "MUSA" if torch.musa.is_available() else "CUDA"


class Settings:
    def tf32_note(self):
        device_str = "XPU" if torch.xpu.is_available() else "CUDA"
        print(f"Setting TF32 in {device_str} backends")
