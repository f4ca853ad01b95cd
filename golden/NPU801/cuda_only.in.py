import lightning as L
from lightning.fabric.accelerators import CUDAAccelerator
from lightning.fabric.plugins import BitsandbytesPrecision
from tests_fabric.helpers.runif import RunIf


def devices():
    if CUDAAccelerator.is_available():
        return CUDAAccelerator.auto_device_count()
    return 1


@RunIf(min_cuda_gpus=2, standalone=True)
def test_two_gpus():
    plugin = BitsandbytesPrecision(mode="nf4", dtype=torch.bfloat16)
    fabric = L.Fabric(accelerator="cpu", plugins=plugin)
