// cp_async_prefetch: 3 x 3 stencil (weighted sum of the 9 neighbours, zero padding) over an
// fp32 image (h, w), computed by blocks that march down a strip of columns row by row.
// Baseline: each step loads the next input row into a 3-row shared-memory ring with ordinary
// loads (global -> register -> shared), waits at a barrier, then computes one output row.
// Optimized: the same march and compute, but rows are fetched with cp.async into a 5-row ring,
// issued two rows ahead of the row being computed, so the loads overlap the compute.
// Why faster: a synchronous step has one 16-byte load per thread in flight and then none while
// it computes, stores and waits at two barriers; with ~4 blocks of 256 threads per SM that is at
// most 16 KB in flight per SM, under the ~23 KB that HBM needs (Little's law), and less on
// average. Prefetching keeps two more rows (8 KB) per block on the way at all times.
// HBM-bound: 2 x 504 MiB at 18432 x 7168, ~352 us at 3.0 TB/s.
// H100: see README.
// Run: aisp bench run --targets ch07:cp_async_prefetch
#include <cstdint>

#include "aisp/async_copy.cuh"
#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "row_stencil.cuh"

namespace aisp::ch07 {
namespace {

// Workload, napkin math, the baseline and the notes on geometry, slot layout and tolerance:
// row_stencil.cuh (shared with ch07:tma_bulk_copy).
//
// Note [cp.async slot fill]: the optimized kernel fills a slot (Note [row slot]) in the same
// 16-byte chunks as the baseline, each a 16-byte cp.async (the strip's float4s are 16-byte
// aligned in shared memory for it); chunks outside the image are zero-filled with plain stores.
// The 16-byte copies need w % 4 == 0, as the baseline's chunks do (Note [vector path]); other
// widths take 4-byte cp.async: correct, not tuned.

constexpr int prefetch_rows = 2;  // rows in flight beyond the three being read

// ---- Optimized: cp.async, prefetch_rows rows ahead ----
// Changed: the ring has 3 + prefetch_rows slots; local row j (input row y0 - 1 + j) goes to slot
// j % slots, one commit group per row. Before computing row y (local k + 1), a thread waits for
// its own copies of local row k + 2 (cp.async.wait_group leaves the prefetch_rows younger groups
// in flight), the block meets at one barrier (everyone's copies visible; everyone done with
// step k - 1, so the slot of local row k - 1 is free), and the block refills that slot with
// local row k + 2 + prefetch_rows before computing. cp.async.cg moves 16 bytes from L2 straight
// into shared memory: no register, and the thread does not wait for it. The .L2::128B hint lets
// the L2 fetch the whole 128-byte line on a miss (the block reads all of it): measured +1.5%.
__device__ void cp_async_bytes16(void* shared_dst, const void* global_src) {
  const auto dst = static_cast<unsigned int>(__cvta_generic_to_shared(shared_dst));
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(dst),
               "l"(global_src)
               : "memory");
}
__device__ void cp_async_bytes4(void* shared_dst, const void* global_src) {
  const auto dst = static_cast<unsigned int>(__cvta_generic_to_shared(shared_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(global_src) : "memory");
}

template <bool Vector>
__device__ void load_row_async(float* slot, const float* __restrict__ image, int h, int w, int y,
                               int x0) {
  const bool row_inside = y >= 0 && y < h;
  const float* row = image + std::int64_t{y} * w;
  if constexpr (Vector) {
    for (int c = static_cast<int>(threadIdx.x); c < slot_floats / 4; c += block_threads) {
      const int gx = x0 - strip_offset + 4 * c;
      if (row_inside && gx >= 0 && gx < w) {
        cp_async_bytes16(slot + 4 * c, row + gx);
      } else {
        *reinterpret_cast<float4*>(slot + 4 * c) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
    }
  } else {
    for (int e = static_cast<int>(threadIdx.x); e < slot_floats; e += block_threads) {
      const int gx = x0 - strip_offset + e;
      if (row_inside && gx >= 0 && gx < w) {
        cp_async_bytes4(slot + e, row + gx);
      } else {
        slot[e] = 0.0f;
      }
    }
  }
}

template <bool Vector>
__global__ void __launch_bounds__(block_threads)
    stencil_cp_async_rows_kernel(const float* __restrict__ image,
                                 const float* __restrict__ weights, float* __restrict__ output,
                                 int h, int w) {
  constexpr int slots = 3 + prefetch_rows;
  __shared__ __align__(16) float ring[slots][slot_floats];
  float wts[9];
  load_weights(weights, wts);
  const int x0 = static_cast<int>(blockIdx.x) * strip_cols;
  const int y0 = static_cast<int>(blockIdx.y) * chunk_rows;
  const int y1 = min(h, y0 + chunk_rows);
  const int last_local = y1 - y0 + 1;  // local rows 0 .. last_local are read

  // Prologue: local rows 0 .. prefetch_rows + 1, one commit group each (empty groups past the
  // end keep the count per step fixed).
#pragma unroll
  for (int j = 0; j < prefetch_rows + 2; ++j) {
    if (j <= last_local) {
      load_row_async<Vector>(ring[j], image, h, w, y0 - 1 + j, x0);
    }
    ptx::cp_async_commit();
  }
  for (int y = y0; y < y1; ++y) {
    const int k = y - y0;
    ptx::cp_async_wait<prefetch_rows - 1>();  // this thread's copies of local row k + 2 landed
    __syncthreads();                     // everyone's; and step k - 1 is done everywhere
    const int next = k + 2 + prefetch_rows;
    if (next <= last_local) {
      load_row_async<Vector>(ring[next % slots], image, h, w, y0 - 1 + next, x0);
    }
    ptx::cp_async_commit();
    compute_row<Vector>(ring[k % slots], ring[(k + 1) % slots], ring[(k + 2) % slots], wts,
                        output, h, w, y, x0);
  }
  ptx::cp_async_wait<0>();  // no copy may still target shared memory when the block exits
}

// ---- Launcher ----
void launch_optimized(run_context& ctx) {
  launch_march(ctx, stencil_cp_async_rows_kernel<true>, stencil_cp_async_rows_kernel<false>);
}

}  // namespace
}  // namespace aisp::ch07

AISP_REGISTER(
    aisp::ch07::row_stencil_pair(
        "ch07:cp_async_prefetch",
        "3x3 stencil marching down rows: synchronous row loads vs cp.async 2 rows ahead",
        {"cp-async"})
        .add_variant("optimized",
                     "same march; rows copied with cp.async 2 rows ahead into a 5-row ring, 1 "
                     "barrier per row",
                     aisp::ch07::launch_optimized));
