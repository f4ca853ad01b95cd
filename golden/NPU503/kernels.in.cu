// Fused softmax: __global__ void commented_out(float* x) {}
#include <cuda_runtime.h>
#define KERNEL_ATTR __global__ void macro_kernel(float* x) {}

/* __global__ void also_a_comment(int n) { } */
static const char* kName = "__global__ void in_a_string(int) {}";

__global__ void decl_only(float* out, int n);

template <typename T, int BLOCK>
__global__ void __launch_bounds__(256) softmax_kernel(T* __restrict__ out, const T* __restrict__ in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

extern "C" __global__ void
bias_gelu_kernel(float* out, const float* in, const float* bias, int n)
{
  out[0] = in[0] + bias[0];
}

__device__ float helper(float x) { return x * 2.0f; }

__global__ void decl_only(float* out, int n) { out[0] = helper(0.0f); }
