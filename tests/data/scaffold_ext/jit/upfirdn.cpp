// A JIT-built extension (jit/ops.py loads it with torch.utils.cpp_extension.load).
#include <torch/extension.h>

torch::Tensor upfirdn_op(const torch::Tensor& input, const torch::Tensor& kernel, int64_t up, int64_t down);

torch::Tensor upfirdn(const torch::Tensor& input, const torch::Tensor& kernel, int64_t up, int64_t down) {
    return upfirdn_op(input, kernel, up, down);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("upfirdn", &upfirdn, "upsample, FIR filter, downsample");
}
