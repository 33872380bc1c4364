// Test data for the cubin reader: one kernel that launches a child grid, one that does not.
__global__ void child_grid(float* out) { out[threadIdx.x] += 1.0f; }
__global__ void launches_children(float* out) {
  if (threadIdx.x == 0) child_grid<<<1, 32, 0, cudaStreamFireAndForget>>>(out);
}
__global__ void plain_kernel(float* out) { out[threadIdx.x] = 2.0f; }
