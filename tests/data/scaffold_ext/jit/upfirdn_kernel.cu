#include <torch/extension.h>

__global__ void upfirdn_kernel(float* out, const float* input, const float* kernel, int up, int down) {}

torch::Tensor upfirdn_op(const torch::Tensor& input, const torch::Tensor& kernel, int64_t up, int64_t down) {
    return input;
}
