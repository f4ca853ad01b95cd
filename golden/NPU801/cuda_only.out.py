import lightning as L
from lightning.fabric.accelerators import CUDAAccelerator
from lightning.fabric.plugins import BitsandbytesPrecision
from tests_fabric.helpers.runif import RunIf


def devices():
    # TODO(ascend-port): NPU801 [low] CUDAAccelerator counts CUDA GPUs (none on an NPU host): use torch.npu.is_available()/torch.npu.device_count(), or the custom NPU Accelerator's methods
    if CUDAAccelerator.is_available():
        # TODO(ascend-port): NPU801 [low] CUDAAccelerator counts CUDA GPUs (none on an NPU host): use torch.npu.is_available()/torch.npu.device_count(), or the custom NPU Accelerator's methods
        return CUDAAccelerator.auto_device_count()
    return 1


# TODO(ascend-port): NPU801 [low] _RunIf(min_cuda_gpus=...) skips this test on an NPU host (no CUDA GPUs): mark it for NPUs by hand (e.g. pytest.mark.skipif(torch.npu.device_count() < N, ...))
@RunIf(min_cuda_gpus=2, standalone=True)
def test_two_gpus():
    # TODO(ascend-port): NPU801 [low] BitsandbytesPrecision runs bitsandbytes' CUDA kernels: use precision="bf16-mixed" (torch_npu's quantized matmuls for low-bit weights)
    plugin = BitsandbytesPrecision(mode="nf4", dtype=torch.bfloat16)
    fabric = L.Fabric(accelerator="cpu", plugins=plugin)
