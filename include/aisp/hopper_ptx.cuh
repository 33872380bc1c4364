// Hopper (sm_90a) PTX primitives for labs/gemm's steps 5-7 (steps_hopper.cuh) and labs/attention's
// wgmma steps (wgmma_attention.cuh): mbarriers, TMA tensor loads (plain and cluster multicast),
// wgmma with shared-memory descriptors, setmaxnreg, cluster barriers and stmatrix. Each wrapper
// is one PTX instruction (or one wait loop); the protocols that use them are described where
// they are used. The wgmma shapes with A in registers and N-major B are in wgmma_shapes.cuh.
//
// The sm_90a-only instructions compile only where the 'a' feature set exists; elsewhere the
// kernels that use them are empty and the launchers never pick them (see device_facts).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define AISP_HOPPER_DEVICE 1
#else
#define AISP_HOPPER_DEVICE 0
#endif

namespace aisp::hopper {

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

#if AISP_HOPPER_DEVICE

// ---- mbarrier ----
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(arrivals) : "memory");
}

// Makes the initialised barriers visible to the async proxy (TMA) and to the cluster's peers.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Waits until the phase with this parity has completed (Note [ring phases]). The loop lives
// inside one asm block so the warp leaves it converged, ready for the .aligned wgmma ops.
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  asm volatile(
      "{\n\t.reg .pred ready;\n"
      "AISP_WAIT_LOOP:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 ready, [%0], %1;\n\t"
      "@!ready bra AISP_WAIT_LOOP;\n}" ::"r"(bar),
      "r"(parity)
      : "memory");
}

__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// Arrives on the barrier at the same offset in cluster CTA `cta_rank` (possibly this one).
// Note [empty release]: the default .release.cta, not .release.cluster: the consumer only read
// the slot (its wgmma reads are ordered by wgmma.wait_group before this arrive), so nothing of
// its own needs publishing to the peer. With .release.cluster here (and an .acquire.cluster
// wait in the producer) the 2-CTA kernel ran at 533 / 579 TFLOP/s at 4096^3 / 8192^3 against
// 738 / 665 for step 6; with the defaults, 764 / 794 (H100, exploratory sweeps before and after
// the change). Our reading, not profiled: the cluster-scope release waits like a fence for the
// thread's outstanding memory operations each k-block. The producer's wait is the plain one.
__device__ __forceinline__ void mbar_arrive_cluster(std::uint32_t bar, std::uint32_t cta_rank) {
  asm volatile(
      "{\n\t.reg .b32 remote;\n\t"
      "mapa.shared::cluster.u32 remote, %0, %1;\n\t"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}" ::"r"(bar),
      "r"(cta_rank)
      : "memory");
}

// One arrival that also announces `bytes` of TMA traffic the phase must wait for.
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

// ---- TMA ----
__device__ __forceinline__ void prefetch_tensor_map(const void* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

// Box at (x = inner/k element, y = row) of a 2-D map into shared memory; completes on `bar`.
// Out-of-bounds elements arrive as zeros and still count towards the transaction bytes.
__device__ __forceinline__ void tma_load_2d(std::uint32_t dst, const void* map, std::uint32_t bar,
                                            int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

// Box at (x, y, z) of a 3-D map (labs/attention: x = head dim, y = token, z = batch x head), so a
// box past a sequence's end reads zeros instead of the next head's rows.
__device__ __forceinline__ void tma_load_3d(std::uint32_t dst, const void* map, std::uint32_t bar,
                                            int x, int y, int z) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(bar)
      : "memory");
}

// The same box written to the same offset in every CTA of `cta_mask`, each completing on its
// own barrier at offset `bar`.
__device__ __forceinline__ void tma_load_2d_multicast(std::uint32_t dst, const void* map,
                                                      std::uint32_t bar, int x, int y,
                                                      std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(bar), "h"(cta_mask)
      : "memory");
}

// The reverse: a box of shared memory (written through the generic proxy, so fenced first with
// fence_proxy_async_shared) to (x, y, z) of a 3-D map; elements past the map's bounds are not
// written. Completes as a bulk group: commit, then wait for the reads before the buffer is reused
// or the CTA exits.
__device__ __forceinline__ void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ __forceinline__ void tma_store_3d(const void* map, std::uint32_t src, int x, int y, int z) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(src), "r"(x), "r"(y), "r"(z)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_reads() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }

// ---- cluster ----
__device__ __forceinline__ std::uint32_t cluster_cta_rank() {
  std::uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}
__device__ __forceinline__ std::uint32_t cluster_id_x() {
  std::uint32_t id;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(id));
  return id;
}
__device__ __forceinline__ std::uint32_t cluster_count_x() {
  std::uint32_t count;
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(count));
  return count;
}
// Every non-exited thread of the cluster arrives (release) and waits (acquire). Not .aligned:
// the producer warp reaches it with one lane coming from the TMA loop.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

// ---- named barriers (ids 1-15; 0 is __syncthreads) ----
// `threads` counts both sides: the warps that wait here and the warps that only arrive.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// ---- register reconfiguration (whole warpgroup, .sync.aligned) ----
template <int Registers>
__device__ __forceinline__ void warpgroup_release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Registers));
}
template <int Registers>
__device__ __forceinline__ void warpgroup_claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Registers));
}

// ---- wgmma ----
// Note [wgmma descriptor]: a K-major operand tile whose rows are 64 bf16 = 128 bytes, written by
// TMA with 128-byte swizzle (16-byte chunk c of row r stored at chunk c ^ (r % 8)), from a
// 1024-byte aligned base. Descriptor fields: bits 0-13 start address >> 4; bits 16-29 leading
// byte offset >> 4 (unused for swizzled K-major: 1, as CUTLASS sets it); bits 32-45 stride byte
// offset >> 4 = 1024 >> 4 (the distance between 8-row core-matrix groups: 8 rows x 128 B);
// bits 49-51 base offset 0 (the base is 1024-aligned); bits 62-63 swizzle mode 1 = 128B. The
// k-th 16-wide K slice starts 32 bytes further: the hardware applies the XOR to the final
// address bits, so advancing the start address inside the swizzle atom is exact.
__device__ __forceinline__ std::uint64_t sw128_kmajor_desc(std::uint32_t smem_addr) {
  return static_cast<std::uint64_t>((smem_addr & 0x3FFFFu) >> 4) |
         (static_cast<std::uint64_t>(16u >> 4) << 16) |
         (static_cast<std::uint64_t>(1024u >> 4) << 32) | (std::uint64_t{1} << 62);
}

// A K-major operand without swizzle: core matrices of 8 rows x 16 bytes, `leading_bytes` apart
// along K and `stride_bytes` apart along the rows (M or N), from a 16-byte aligned base.
__device__ __forceinline__ std::uint64_t no_swizzle_kmajor_desc(std::uint32_t smem_addr, int leading_bytes, int stride_bytes) {
  return static_cast<std::uint64_t>((smem_addr & 0x3FFFFu) >> 4) |
         (static_cast<std::uint64_t>(static_cast<std::uint32_t>(leading_bytes) >> 4) << 16) |
         (static_cast<std::uint64_t>(static_cast<std::uint32_t>(stride_bytes) >> 4) << 32);
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(Pending) : "memory");
}

// Pins the accumulators around a wait: the compiler may not move a read or write of them across
// this point (the wgmma writes them asynchronously, invisibly to the compiler).
template <int N>
__device__ __forceinline__ void fence_accumulators(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    asm volatile("" : "+f"(d[i])::"memory");
  }
}

// The "+f" operands of eight accumulators d[i..i+7] of a wgmma asm statement. Left defined:
// every wgmma wrapper with a 128-float accumulator lists them this way (labs/gemm/fp8_tiles.cuh).
#define AISP_ACC8(i)                                                                        \
  "+f"(d[(i)]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3]), "+f"(d[(i) + 4]),     \
      "+f"(d[(i) + 5]), "+f"(d[(i) + 6]), "+f"(d[(i) + 7])

// D(64 x 256, fp32) += A(64 x 16) * B(256 x 16)^T, A and B K-major bf16 in shared memory.
// Accumulator layout (warp w of the warpgroup, lane l, j = 0..31): d[4j + 0..1] hold row
// 16w + l/4, columns 8j + 2(l%4) + {0, 1}; d[4j + 2..3] the same columns of row 16w + l/4 + 8.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], std::uint64_t desc_a,
                                                 std::uint64_t desc_b) {
  asm volatile(
      "{\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
      "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, "
      "%70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, "
      "%87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, "
      "%104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, "
      "%118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, 1, 1, 1, 0, 0;\n"
      "}\n"
      : AISP_ACC8(0), AISP_ACC8(8), AISP_ACC8(16), AISP_ACC8(24), AISP_ACC8(32), AISP_ACC8(40),
        AISP_ACC8(48), AISP_ACC8(56), AISP_ACC8(64), AISP_ACC8(72), AISP_ACC8(80), AISP_ACC8(88),
        AISP_ACC8(96), AISP_ACC8(104), AISP_ACC8(112), AISP_ACC8(120)
      : "l"(desc_a), "l"(desc_b));
}


// ---- stmatrix: four 8x8 bf16 matrices from mma fragments to shared memory ----
// Lane l gives the address of row l % 8 of matrix l / 8; register i of every lane holds the
// fragment of matrix i (row lane / 4, columns 2 (lane % 4) + {0, 1}).
__device__ __forceinline__ void stmatrix_x4(std::uint32_t addr, std::uint32_t r0, std::uint32_t r1,
                                            std::uint32_t r2, std::uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

#endif  // AISP_HOPPER_DEVICE

}  // namespace aisp::hopper
