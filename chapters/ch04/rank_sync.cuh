// Cross-rank ordering for pairs that share memory outside NCCL's buffers (a host region, a peer's
// buffer through CUDA IPC): a small setup-time exchange of bytes between the ranks, and a
// stream-ordered barrier. Both run through the pair's "handshake" scratch (handshake_elements).
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "aisp/check.hpp"
#include "aisp/nccl.hpp"
#include "aisp/run_context.hpp"

namespace aisp::ch04 {

// What one rank contributes to a setup exchange: a shared memory name, an IPC handle + offset.
inline constexpr std::size_t handshake_record_bytes = 128;
using handshake_record = std::array<unsigned char, handshake_record_bytes>;

// The i32 elements of the "handshake" scratch a pair declares: one record per rank.
[[nodiscard]] inline std::int64_t handshake_elements(int world) {
  return static_cast<std::int64_t>(handshake_record_bytes / sizeof(std::int32_t)) * world;
}

// Setup only (every rank runs setup together): every rank's record, rank-major. The host waits.
[[nodiscard]] inline std::vector<handshake_record> exchange_records(run_context& ctx, const handshake_record& mine) {
  auto* device = ctx.as<unsigned char>("handshake");
  const auto world = static_cast<std::size_t>(ctx.world_size());
  unsigned char* own_slot = device + static_cast<std::size_t>(ctx.rank()) * handshake_record_bytes;
  AISP_CUDA_CHECK(cudaMemcpyAsync(own_slot, mine.data(), handshake_record_bytes, cudaMemcpyHostToDevice, ctx.stream()));
  // In place: rank r's send buffer is its own slot of the receive buffer.
  AISP_NCCL_CHECK(nccl().all_gather(own_slot, device, handshake_record_bytes, ncclUint8, nccl_comm(ctx), ctx.stream()));
  std::vector<unsigned char> all(world * handshake_record_bytes);
  AISP_CUDA_CHECK(cudaMemcpyAsync(all.data(), device, all.size(), cudaMemcpyDeviceToHost, ctx.stream()));
  AISP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  std::vector<handshake_record> records(world);
  for (std::size_t r = 0; r < world; ++r) std::memcpy(records[r].data(), all.data() + r * handshake_record_bytes, handshake_record_bytes);
  return records;
}

// Note [stream barrier]: an ncclAllReduce of one int on the stream. A rank's all-reduce starts
// after its earlier work on the stream and completes only when every rank's has started, so the
// work after it, on any rank, follows every rank's work before it: a copy into a shared slot
// before the barrier is done before any peer reads the slot after it. Enqueued, never waited on
// by the host, so it costs one small NCCL kernel (~10-20 us) and keeps run() asynchronous.
inline void stream_barrier(run_context& ctx) {
  auto* flag = ctx.as<std::int32_t>("handshake");
  AISP_NCCL_CHECK(nccl().all_reduce(flag, flag, 1, ncclInt32, ncclMax, nccl_comm(ctx), ctx.stream()));
}

}  // namespace aisp::ch04
