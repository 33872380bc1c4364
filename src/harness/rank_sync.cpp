#include "harness/rank_sync.hpp"

#include "aisp/check.hpp"

namespace aisp {

rank_sync::rank_sync(ncclComm_t comm) : comm_(comm) {
  AISP_CUDA_CHECK(cudaMalloc(&device_value_, sizeof(long long)));
}

rank_sync::~rank_sync() { cudaFree(device_value_); }

void rank_sync::barrier(cudaStream_t stream) {
  AISP_NCCL_CHECK(nccl().all_reduce(device_value_, device_value_, 1, ncclInt64, ncclMax, comm_, stream));
}

long long rank_sync::agree_max(long long value, cudaStream_t stream) {
  AISP_CUDA_CHECK(cudaMemcpyAsync(device_value_, &value, sizeof value, cudaMemcpyHostToDevice, stream));
  AISP_NCCL_CHECK(nccl().all_reduce(device_value_, device_value_, 1, ncclInt64, ncclMax, comm_, stream));
  long long agreed = 0;
  AISP_CUDA_CHECK(cudaMemcpyAsync(&agreed, device_value_, sizeof agreed, cudaMemcpyDeviceToHost, stream));
  AISP_CUDA_CHECK(cudaStreamSynchronize(stream));
  return agreed;
}

}  // namespace aisp
