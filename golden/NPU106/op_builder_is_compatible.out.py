# An op builder's is_compatible() answers "can this CUDA kernel be built here?": its CUDA test stays CUDA, so on an
# NPU host the CUDA-only path (torch.version.cuda, the SM check) is never taken. The rest of the module is ported.
import torch
import torch_npu


class CUDAOpBuilder:
    def is_compatible(self, verbose=False):
        return True


class InferenceBuilder(CUDAOpBuilder):
    def is_compatible(self, verbose=False):
        cuda_okay = True
        if torch.cuda.is_available():
            torch_cuda_major = int(torch.version.cuda.split(".")[0])
            # TODO(ascend-port): NPU108 [low] NPU device properties have no .major (only name, total_memory, L2_cache_size, cube_core_num, vector_core_num), so the call stays on torch.cuda: test the feature instead
            cuda_capability = torch.cuda.get_device_properties(0).major
            if cuda_capability < 8:
                cuda_okay = False
            if torch_cuda_major < 11:
                cuda_okay = False
        return super().is_compatible(verbose) and cuda_okay

    def load(self):
        if torch.npu.is_available():
            torch.npu.synchronize()
        return torch.zeros(1, device="npu")
