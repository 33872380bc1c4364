// Device wrappers for the asynchronous copy machinery that the pipeline pairs share: cp.async
// groups, mbarriers, bulk and tensor (TMA) copies. One PTX instruction each, shared-memory
// operands given as generic pointers. sm_80+ (cp.async), sm_90 (mbarrier tx, bulk, TMA).
#pragma once

#include <cuda.h>  // CUtensorMap (the type only: nothing links libcuda)

#include <cstdint>

namespace aisp::ptx {

// The 32-bit shared-window address PTX wants for a pointer into shared memory.
__device__ __forceinline__ unsigned int shared_address(const void* p) {
  return static_cast<unsigned int>(__cvta_generic_to_shared(p));
}

// ---- cp.async (Ampere): per-thread 16-byte copies in commit groups ----
// src_bytes < 16 copies that many bytes and zero-fills the rest of the 16 (0: all zeros).
__device__ __forceinline__ void cp_async_zfill16(void* shared_dst, const void* global_src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(shared_dst)),
               "l"(global_src), "r"(src_bytes)
               : "memory");
}
// The same through L1 (.ca): for data other warps of the SM read as well.
__device__ __forceinline__ void cp_async_l1_zfill16(void* shared_dst, const void* global_src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(shared_dst)),
               "l"(global_src), "r"(src_bytes)
               : "memory");
}
// 4 bytes (cp-size 4 exists only with .ca); src_bytes 0 writes a zero.
__device__ __forceinline__ void cp_async_zfill4(void* shared_dst, const void* global_src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address(shared_dst)),
               "l"(global_src), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Wait until at most `Pending` of this thread's most recent groups are still in flight.
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}
// Arrive on `barrier` once all of this thread's earlier cp.async copies have landed; .noinc:
// the arrival is one of the barrier's initial count, not an extra one.
__device__ __forceinline__ void cp_async_arrive_noinc(std::uint64_t* barrier) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(shared_address(barrier)) : "memory");
}

// ---- mbarriers (Hopper transaction counts) ----
__device__ __forceinline__ void mbarrier_init(std::uint64_t* barrier, unsigned int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(barrier)), "r"(arrivals) : "memory");
}
// After initializing barriers, before any async-proxy operation (TMA) may complete on them.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(barrier)) : "memory");
}
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* barrier, unsigned int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(barrier)), "r"(bytes)
               : "memory");
}
// Spin until the barrier's phase with this parity has completed.
__device__ __forceinline__ void mbarrier_wait_parity(std::uint64_t* barrier, unsigned int parity) {
  asm volatile(
      "{\n"
      " .reg .pred done;\n"
      "wait_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait_%=;\n"
      "}\n" ::"r"(shared_address(barrier)),
      "r"(parity)
      : "memory");
}

// ---- Bulk and tensor copies (TMA), completing `bytes` of transaction on a barrier ----
__device__ __forceinline__ void bulk_copy_to_shared(void* dst, const void* src, unsigned int bytes, std::uint64_t* barrier) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
          shared_address(dst)),
      "l"(src), "r"(bytes), "r"(shared_address(barrier))
      : "memory");
}
// Asks the L2 for `bytes` (a multiple of 16) at a 16-byte aligned address; nothing waits on it.
__device__ __forceinline__ void bulk_prefetch_l2(const void* src, unsigned int bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(src), "r"(bytes) : "memory");
}
// The box at (x, y) (innermost first) of `map` into shared memory; out-of-bounds elements zero.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int x, int y, std::uint64_t* barrier) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(shared_address(barrier))
      : "memory");
}

}  // namespace aisp::ptx
