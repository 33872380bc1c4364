// A peer rank's harness buffer mapped into this process with CUDA IPC, so a copy engine reads it
// over NVLink directly (ch04:p2p_copy). Made in setup, which every rank runs together: each rank
// exports the allocation holding its buffer, the handles go around (exchange_records), and each
// rank opens the one of the peer it reads. The harness allocates every buffer with its own
// cudaMalloc (src/harness/buffer_store.cpp); the offset into the allocation is exchanged anyway,
// so a buffer that is not an allocation's base still maps to the right bytes.
#pragma once

#include <cuda.h>  // CUdeviceptr and CUresult only: the driver call is looked up, not linked
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "aisp/check.hpp"
#include "aisp/run_context.hpp"
#include "rank_sync.cuh"

namespace aisp::ch04 {

// The allocation that holds `pointer`: its base and this pointer's offset into it. aisp links only
// cudart, so cuMemGetAddressRange comes through the runtime's entry-point query.
struct allocation_place {
  void* base = nullptr;
  std::size_t offset = 0;
};
[[nodiscard]] inline allocation_place allocation_of(const void* pointer) {
  static const auto address_range = [] {
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found{};
    AISP_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &entry, 12000, cudaEnableDefault, &found));
    AISP_EXPECTS(found == cudaDriverEntryPointSuccess && entry != nullptr, "the driver has no cuMemGetAddressRange");
    return reinterpret_cast<PFN_cuMemGetAddressRange_v3020>(entry);
  }();
  CUdeviceptr base = 0;
  std::size_t size = 0;
  const auto address = reinterpret_cast<CUdeviceptr>(pointer);
  const CUresult status = address_range(&base, &size, address);
  AISP_EXPECTS(status == CUDA_SUCCESS, "cuMemGetAddressRange failed with CUresult " + std::to_string(static_cast<int>(status)));
  return {reinterpret_cast<void*>(base), static_cast<std::size_t>(address - base)};
}

class peer_buffer {
 public:
  // Exports `mine` (this rank's buffer) and maps the same buffer of rank `peer`.
  peer_buffer(run_context& ctx, const void* mine, int peer) : exported_(mine) {
    AISP_EXPECTS(peer != ctx.rank() && peer >= 0 && peer < ctx.world_size(), "peer_buffer maps another rank's buffer");
    struct ipc_record {
      cudaIpcMemHandle_t handle;
      std::uint64_t offset;
    };
    static_assert(sizeof(ipc_record) <= handshake_record_bytes, "an IPC handle and its offset fit one handshake record");
    const allocation_place place = allocation_of(mine);
    ipc_record own{};
    AISP_CUDA_CHECK(cudaIpcGetMemHandle(&own.handle, place.base));
    own.offset = place.offset;
    handshake_record record{};
    std::memcpy(record.data(), &own, sizeof(own));
    const auto records = exchange_records(ctx, record);
    ipc_record theirs{};
    std::memcpy(&theirs, records[static_cast<std::size_t>(peer)].data(), sizeof(theirs));
    // Lazy peer access: the driver enables NVLink access to the peer's GPU for this mapping.
    AISP_CUDA_CHECK(cudaIpcOpenMemHandle(&mapped_base_, theirs.handle, cudaIpcMemLazyEnablePeerAccess));
    peer_ = static_cast<unsigned char*>(mapped_base_) + theirs.offset;
  }
  ~peer_buffer() { static_cast<void>(cudaIpcCloseMemHandle(mapped_base_)); }  // nobody is left to tell
  peer_buffer(const peer_buffer&) = delete;
  peer_buffer& operator=(const peer_buffer&) = delete;

  // The peer's buffer, read through the mapping. `mine` must be the pointer exported in setup:
  // the harness re-runs setup when it moves buffers, so a different one means a stale mapping
  // (every rank checks its own buffer, so a peer that moved fails on that peer).
  [[nodiscard]] const void* peer(const void* mine) const {
    AISP_EXPECTS(mine == exported_, "the harness's buffer moved since setup: the peer mapping is stale");
    return peer_;
  }

 private:
  const void* exported_;
  void* mapped_base_ = nullptr;
  const void* peer_ = nullptr;
};

}  // namespace aisp::ch04
