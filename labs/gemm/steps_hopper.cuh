// Hopper steps of the bf16 GEMM lab (sm_90a): C(m, n) = A(m, k) . B(n, k)^T, see gemm_problem.cuh.
//   5 wgmma_tma:          TMA (128-byte swizzle) fills a 4-slot ring of 128x64 A and 256x64 B
//                         tiles, completing on mbarriers; two warpgroups run m64n256k16 wgmma
//                         straight from shared memory (descriptors); one thread refills slots.
//   6 warp_specialized:   + a producer warpgroup (one TMA thread, setmaxnreg down to 40) and two
//                         consumer warpgroups (setmaxnreg up to 232) on full/empty barriers,
//                         persistent over the output tiles (one CTA per SM, static schedule).
//   7 cluster_multicast:  + 2-CTA clusters on vertically adjacent tiles: each CTA loads half of
//                         the shared 256x64 B tile and multicasts it to both, so each B byte
//                         leaves L2 once per cluster; grouped tile order for L2 reuse.
// All three share the 128x256x64 tile, the ring and the epilogue (hopper_tiles.cuh), and fall
// back to a SIMT kernel where TMA cannot describe the operands (k % 8 != 0) or off sm_90.
// The persistent kernel of steps 6-7 is templated on the operand type (Note [operand types]) and
// on where the K sum accumulates (Note [fp32 promotion] in fp8_tiles.cuh): labs/gemm/fp8_gemm.cu
// runs step 7 on e4m3 operands through launch_cluster_persistent.
// Run: through the pairs that include this header (labs/gemm/bf16_gemm.cu, labs/gemm/fp8_gemm.cu).
#pragma once

#include <cuda.h>  // CUtensorMap and its enums only: aisp does not link libcuda (aisp/tensor_map_encoder.hpp)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/hopper_ptx.cuh"
#include "aisp/tensor_map_encoder.hpp"
#include "gemm_problem.cuh"
#include "hopper_tiles.cuh"

namespace aisp::labs_gemm {
namespace hopper {

// Note [ring phases]: slot s is used for the u-th time by the u-th k-block that lands in it
// (a running count over all tiles the CTA computes). full[s] completes its u-th phase when the
// TMA bytes of use u have landed; empty[s] completes its u-th phase when every consumer
// warpgroup (of both CTAs, in a cluster) has finished reading use u. A phase's parity is u & 1:
// consumers wait full[s] with parity u & 1; the producer waits empty[s] with parity
// (u & 1) ^ 1, which passes at once for u = 0 (a fresh barrier counts its "previous" phase,
// parity 1, as complete). No barrier can run two phases ahead of a waiter: refilling a slot
// needs the waiter's own release, so parity is unambiguous.

// Note [wgmma pipeline]: per k-block a warpgroup waits full, issues 4 wgmmas as one commit group
// and then waits until at most one group is pending: the previous k-block's group is complete,
// so its slot is released while the current one still runs on the tensor cores.

// ---- Step 5: all warps compute; thread 0 also issues TMA ----
template <int Stages>
__global__ void __launch_bounds__(256, 1)
    gemm_wgmma_tma_kernel(const __grid_constant__ CUtensorMap map_a,
                          const __grid_constant__ CUtensorMap map_b,
                          __nv_bfloat16* __restrict__ c, int m, int n, int k) {
#if AISP_HOPPER_DEVICE
  static_assert(Stages == stages);
  extern __shared__ std::uint8_t dynamic_smem[];
  const smem_map smem(dynamic_smem);
  const int warpgroup = static_cast<int>(threadIdx.x / 128);
  const bool tma_thread = threadIdx.x == 0;
  const int tile_m0 = static_cast<int>(blockIdx.y) * block_m;
  const int tile_n0 = static_cast<int>(blockIdx.x) * block_n;
  const int k_blocks = ceil_div(k, block_k);

  if (tma_thread) {
    prefetch_tensor_map(&map_a);
    prefetch_tensor_map(&map_b);
    for (int s = 0; s < Stages; ++s) {
      mbar_init(smem.full(s), 1);                    // the TMA thread's arrive.expect_tx
      mbar_init(smem.empty(s), consumer_warpgroups);  // one release per warpgroup
    }
    fence_barrier_init();
  }
  __syncthreads();

  const auto load_k_block = [&](int kb) {
    const int s = kb % Stages;
    mbar_arrive_expect_tx(smem.full(s), stage_bytes);
    tma_load_2d(smem.a(s), &map_a, smem.full(s), kb * block_k, tile_m0);
    tma_load_2d(smem.b(s), &map_b, smem.full(s), kb * block_k, tile_n0);
  };
  if (tma_thread) {
    for (int kb = 0; kb < k_blocks && kb < Stages; ++kb) load_k_block(kb);
  }

  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
  fence_accumulators(acc);
  for (int kb = 0; kb < k_blocks; ++kb) {
    const int s = kb % Stages;
    mbar_wait(smem.full(s), static_cast<std::uint32_t>(kb / Stages) & 1u);
    mma_k_block(acc, smem.a(s) + warpgroup * a_warpgroup_bytes, smem.b(s));
    wgmma_wait<1>();  // k-block kb - 1 is read: release its slot (Note [wgmma pipeline])
    if (kb > 0) {
      const int done = kb - 1;
      const int slot = done % Stages;
      if (threadIdx.x % 128 == 0) mbar_arrive(smem.empty(slot));
      if (tma_thread && done + Stages < k_blocks) {
        mbar_wait(smem.empty(slot), static_cast<std::uint32_t>(done / Stages) & 1u);
        load_k_block(done + Stages);
      }
    }
  }
  wgmma_wait<0>();
  fence_accumulators(acc);

  const int warp = static_cast<int>(threadIdx.x / 32);  // 0..7 = warpgroup * 4 + warp in it
  store_warp_rows(acc, smem.staging(warp), c, m, n, tile_m0 + 16 * warp, tile_n0);
#else
  (void)map_a, (void)map_b, (void)c, (void)m, (void)n, (void)k;
  __trap();
#endif
}

// ---- Steps 6 and 7: producer warpgroup + 2 consumer warpgroups, persistent ----
// Where a tile's K sum accumulates: in the wgmma accumulators across all of K (bf16, and e4m3 in
// the tensor core's reduced-precision fp8 accumulation), or in fresh wgmma accumulators per
// 128-byte k-block that are added into fp32 registers (e4m3 only: Note [fp32 promotion]), or
// so and scaled on the way by the k-block's scales of A and B (Note [block scales]).
enum class accumulation : std::uint8_t { in_tensor_core, promoted_per_k_block, promoted_block_scaled };

// Note [block scales]: DeepSeek-V3's fp8 recipe. A holds one fp32 scale a row and 128 k, B one a
// 128 x 128 block, so C = sum over k-blocks kb of sa(row, kb) sb(col / 128, kb) (A B^T over kb).
// A k-block is 128 e4m3, the promotion interval of Note [fp32 promotion], so the scales apply
// where the partial sum is added into fp32: total += partial * sa * sb (an FMA). A consumer
// thread's accumulator rows are 16 w + l / 4 and 8 below (registers i % 4 >= 2), and a 256-
// column tile is two B-scale blocks (one a 128-column half): four products of two scales a
// k-block, loaded before the k-block's barrier wait. Other accumulations pass no scales.
struct block_scales {
  const float* a = nullptr;  // (m, ceil(k / 128))
  const float* b = nullptr;  // (ceil(n / 128), ceil(k / 128))
};
constexpr int scale_block = 128;

constexpr int producer_registers = 40;   // one thread issuing TMA: loop counters and coordinates
constexpr int consumer_registers = 232;  // 128 accumulators + addressing
// 128 x 40 + 256 x 232 = 64,512 = 384 x 168: the registers the CTA holds at launch, redistributed.
static_assert(128 * producer_registers + 256 * consumer_registers <= 384 * 168);
constexpr int tile_group_rows = 8;  // grouped order: 8 (cluster) tile rows per group

// Tile t of the schedule -> (tile row, tile column). Row-major for step 6; for step 7 grouped:
// groups of 8 tile rows, walked column by column, so the ~66 cluster tiles in flight at once
// form an 8 x 8 block (8 A row-panels, 8-9 B column-panels), where row-major would sweep ~2
// tile rows across all 32 B column-panels at 8192 and re-read B from DRAM every wave.
template <bool Grouped>
__device__ __forceinline__ void tile_position(int t, int tiles_m, int tiles_n, int& tm, int& tn) {
  if constexpr (Grouped) {
    const int per_group = tile_group_rows * tiles_n;
    const int group = t / per_group;
    const int first_row = group * tile_group_rows;
    const int rows = min(tiles_m - first_row, tile_group_rows);
    const int within = t - group * per_group;
    tm = first_row + within % rows;
    tn = within / rows;
  } else {
    tm = t / tiles_n;
    tn = t % tiles_n;
  }
}

// Note [cluster multicast]: a cluster of ClusterM = 2 CTAs computes a 256 x 256 tile: CTA r owns
// rows 128 r .. 128 r + 127 and both need the same 256 x 64 B tile per k-block. CTA r loads B
// rows 128 r .. 128 r + 127 with .multicast::cluster (mask 0b11) into the same slot offset of
// both CTAs, so each CTA's full[s] receives 16 KB (own A) + 16 KB (own B half) + 16 KB (peer's
// B half) = stage_bytes, armed once by its own producer (the tx-count may go negative if the
// peer's bytes land first; the phase cannot complete before the local arrive). A producer may
// only overwrite slot s once both CTAs' consumers are done with it, so every consumer
// warpgroup releases slot s on the empty barrier of both CTAs (4 arrivals per phase). Every
// thread ends with a cluster barrier: no CTA exits while its peer may still arrive on its
// barriers. L2 -> SM traffic per CTA and k-block falls from 48 KB to 32 KB.
template <class Operands, accumulation Accumulate, int ClusterM, bool Grouped>
__global__ void __launch_bounds__(384, 1)
    gemm_persistent_kernel(const __grid_constant__ CUtensorMap map_a,
                           const __grid_constant__ CUtensorMap map_b,
                           __nv_bfloat16* __restrict__ c, int m, int n, int k, block_scales scales) {
#if AISP_HOPPER_DEVICE
  static_assert(ClusterM == 1 || ClusterM == 2);
  static_assert(Accumulate != accumulation::promoted_block_scaled || Operands::block_k == scale_block,
                "a block-scaled k-block is one scale block");
  extern __shared__ std::uint8_t dynamic_smem[];
  const smem_map smem(dynamic_smem);
  const int warpgroup = static_cast<int>(threadIdx.x / 128);

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(smem.full(s), 1);
      mbar_init(smem.empty(s), consumer_warpgroups * ClusterM);
    }
    fence_barrier_init();
  }
  if constexpr (ClusterM > 1) {
    cluster_sync();  // the peer's barriers exist before anything is multicast into them
  } else {
    __syncthreads();
  }

  const int rank = ClusterM > 1 ? static_cast<int>(cluster_cta_rank()) : 0;
  // A worker is a cluster (step 7) or a CTA (step 6); both CTAs of a cluster share its tiles.
  const int worker = static_cast<int>(ClusterM > 1 ? cluster_id_x() : blockIdx.x);
  const int workers = static_cast<int>(ClusterM > 1 ? cluster_count_x() : gridDim.x);
  const int tiles_m = ceil_div(m, block_m * ClusterM);  // cluster tiles of 128 ClusterM rows
  const int tiles_n = ceil_div(n, block_n);
  const int tiles = tiles_m * tiles_n;
  constexpr int k_block = Operands::block_k;  // elements per 128-byte k-block
  const int k_blocks = ceil_div(k, k_block);

  if (warpgroup == 0) {
    // Producer. setmaxnreg is per warpgroup (.sync.aligned): all 128 threads shrink, one works.
    warpgroup_release_registers<producer_registers>();
    if (threadIdx.x == 0) {
      prefetch_tensor_map(&map_a);
      prefetch_tensor_map(&map_b);
      int slot = 0;
      std::uint32_t phase = 0;
      for (int t = worker; t < tiles; t += workers) {
        int tm = 0;
        int tn = 0;
        tile_position<Grouped>(t, tiles_m, tiles_n, tm, tn);
        const int row0 = (tm * ClusterM + rank) * block_m;
        const int col0 = tn * block_n;
        for (int kb = 0; kb < k_blocks; ++kb) {
          mbar_wait(smem.empty(slot), phase ^ 1u);
          mbar_arrive_expect_tx(smem.full(slot), stage_bytes);
          tma_load_2d(smem.a(slot), &map_a, smem.full(slot), kb * k_block, row0);
          if constexpr (ClusterM > 1) {
            constexpr int half_rows = block_n / 2;
            tma_load_2d_multicast(smem.b(slot) + rank * (b_tile_bytes / 2), &map_b,
                                  smem.full(slot), kb * k_block, col0 + rank * half_rows,
                                  static_cast<std::uint16_t>((1u << ClusterM) - 1u));
          } else {
            tma_load_2d(smem.b(slot), &map_b, smem.full(slot), kb * k_block, col0);
          }
          if (++slot == stages) {
            slot = 0;
            phase ^= 1u;
          }
        }
      }
    }
  } else {
    warpgroup_claim_registers<consumer_registers>();
    const int consumer = warpgroup - 1;
    const int thread_in_group = static_cast<int>(threadIdx.x % 128);
    const int warp_in_group = thread_in_group / 32;
    const auto release = [&](int s) {
      if constexpr (ClusterM > 1) {
        if (thread_in_group < ClusterM) mbar_arrive_cluster(smem.empty(s), thread_in_group);
      } else {
        if (thread_in_group == 0) mbar_arrive(smem.empty(s));
      }
    };
    int slot = 0;
    std::uint32_t phase = 0;
    const auto advance = [&] {
      if (++slot == stages) {
        slot = 0;
        phase ^= 1u;
      }
    };
    if constexpr (Accumulate == accumulation::in_tensor_core) {
      float acc[128];
      for (int t = worker; t < tiles; t += workers) {
        int tm = 0;
        int tn = 0;
        tile_position<Grouped>(t, tiles_m, tiles_n, tm, tn);
        const int row0 = (tm * ClusterM + rank) * block_m;
        const int col0 = tn * block_n;
#pragma unroll
        for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
        fence_accumulators(acc);
        int previous = 0;
        for (int kb = 0; kb < k_blocks; ++kb) {
          mbar_wait(smem.full(slot), phase);
          mma_k_block<Operands>(acc, smem.a(slot) + consumer * a_warpgroup_bytes, smem.b(slot));
          wgmma_wait<1>();
          if (kb > 0) release(previous);
          previous = slot;
          advance();
        }
        wgmma_wait<0>();
        fence_accumulators(acc);
        release(previous);
        // The producer is already filling the next tile's slots while this runs.
        store_warp_rows(acc, smem.staging(consumer * 4 + warp_in_group), c, m, n,
                        row0 + consumer * warpgroup_rows + 16 * warp_in_group, col0);
      }
    } else {
      // Note [fp32 promotion]: each k-block is summed in fresh wgmma accumulators (two 64 x 128
      // halves, 64 registers) and added into 128 fp32 registers; its slot is free once both
      // halves have completed.
      float total[128];
      float partial[64];
#pragma unroll
      for (int i = 0; i < 64; ++i) partial[i] = 0.0f;
      for (int t = worker; t < tiles; t += workers) {
        int tm = 0;
        int tn = 0;
        tile_position<Grouped>(t, tiles_m, tiles_n, tm, tn);
        const int row0 = (tm * ClusterM + rank) * block_m;
        const int col0 = tn * block_n;
#pragma unroll
        for (int i = 0; i < 128; ++i) total[i] = 0.0f;
        // Note [block scales]: this thread's two accumulator rows and the tile's two B-scale blocks.
        const int top_row = row0 + consumer * warpgroup_rows + 16 * warp_in_group + thread_in_group % 32 / 4;
        const int scale_rows[2] = {min(top_row, m - 1), min(top_row + 8, m - 1)};  // rows past m add zeros
        const int last_column_block = (n - 1) / scale_block;
        const int column_blocks[2] = {min(col0 / scale_block, last_column_block), min(col0 / scale_block + 1, last_column_block)};
        for (int kb = 0; kb < k_blocks; ++kb) {
          float scale[2][2] = {{1.0f, 1.0f}, {1.0f, 1.0f}};  // [half][top or bottom row]
          if constexpr (Accumulate == accumulation::promoted_block_scaled) {
#pragma unroll
            for (int half = 0; half < 2; ++half) {
              const float sb = __ldg(scales.b + static_cast<std::size_t>(column_blocks[half]) * k_blocks + kb);
#pragma unroll
              for (int r = 0; r < 2; ++r) scale[half][r] = __ldg(scales.a + static_cast<std::size_t>(scale_rows[r]) * k_blocks + kb) * sb;
            }
          }
          mbar_wait(smem.full(slot), phase);
          Operands::template mma_k_block_promoted<Accumulate == accumulation::promoted_block_scaled>(
              total, partial, smem.a(slot) + consumer * a_warpgroup_bytes, smem.b(slot), scale);
          release(slot);
          advance();
        }
        store_warp_rows(total, smem.staging(consumer * 4 + warp_in_group), c, m, n,
                        row0 + consumer * warpgroup_rows + 16 * warp_in_group, col0);
      }
    }
  }
  if constexpr (ClusterM > 1) cluster_sync();
#else
  (void)map_a, (void)map_b, (void)c, (void)m, (void)n, (void)k, (void)scales;
  __trap();
#endif
}

// ---- Host side ----
// A (rows, k) K-major matrix as a 2-D tensor map: box = one 128-byte k-block (Operands::block_k
// elements) x box_rows, 128-byte swizzle (Note [wgmma descriptor]), zero fill out of bounds.
// Host-only encoding into a stack object: no allocation, ~1 us; rebuilt every call because
// buffers may move between calls.
template <class Operands>
CUtensorMap kmajor_tensor_map(const typename Operands::element* data, int rows, int k,
                              int box_rows) {
  using element = typename Operands::element;
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k) * sizeof(element)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(Operands::block_k),
                             static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult status = tensor_map_encode_function()(
      &map, Operands::tma_type, 2, const_cast<element*>(data), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  AISP_EXPECTS(status == CUDA_SUCCESS, "cuTensorMapEncodeTiled rejected a GEMM operand");
  return map;
}

constexpr int cluster_m = 2;
inline constexpr auto step5_kernel = gemm_wgmma_tma_kernel<stages>;
inline constexpr auto step6_kernel =
    gemm_persistent_kernel<bf16_operands, accumulation::in_tensor_core, 1, false>;
// Step 7 on any operand type: 2-CTA clusters, multicast B, grouped tile order.
template <class Operands, accumulation Accumulate>
inline constexpr auto cluster_kernel =
    gemm_persistent_kernel<Operands, Accumulate, cluster_m, true>;
inline constexpr auto step7_kernel = cluster_kernel<bf16_operands, accumulation::in_tensor_core>;

inline cudaLaunchAttribute cluster_attribute() {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = cluster_m;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  return attribute;
}

constexpr int max_devices = 64;  // the per-device caches below

inline int current_device() {
  int device = 0;
  AISP_CUDA_CHECK(cudaGetDevice(&device));
  AISP_EXPECTS(device >= 0 && device < max_devices, "device index beyond the facts cache");
  return device;
}

// What the launchers need to know about the current device, queried once per device: whether
// the sm_90a kernels can run and the SM count (persistent grids). Filling it also resolves the
// tensor-map encoder, so a launch does no more than encode and launch.
struct device_facts {
  bool hopper = false;
  int sm_count = 0;
};

inline const device_facts& facts_for_current_device() {
  static device_facts cache[max_devices];
  static bool known[max_devices] = {};
  const int device = current_device();
  if (known[device]) return cache[device];
  device_facts facts;
  int major = 0;
  int minor = 0;
  AISP_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  AISP_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  AISP_CUDA_CHECK(cudaDeviceGetAttribute(&facts.sm_count, cudaDevAttrMultiProcessorCount, device));
  facts.hopper = major == 9 && minor == 0;
  if (facts.hopper) (void)tensor_map_encode_function();
  cache[device] = facts;
  known[device] = true;
  return cache[device];
}

// The shared-memory opt-in (smem_bytes) of one of these kernels, once per device and kernel.
// Only on a Hopper device.
template <auto Kernel>
void opt_in_smem_for_current_device() {
  static bool done[max_devices] = {};
  const int device = current_device();
  if (done[device]) return;
  AISP_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       smem_bytes));
  done[device] = true;
}

// How many 2-CTA clusters of this step-7-shaped kernel fit at once (GPCs may leave SMs that
// cannot pair up), after setting its shared-memory opt-in; once per device and kernel. Only on
// a Hopper device.
template <auto Kernel>
int cluster_slots_for_current_device(const device_facts& facts) {
  static int cache[max_devices] = {};  // 0: not yet asked
  const int device = current_device();
  if (cache[device] > 0) return cache[device];
  opt_in_smem_for_current_device<Kernel>();
  cudaLaunchAttribute attribute = cluster_attribute();
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(facts.sm_count / cluster_m * cluster_m));
  config.blockDim = dim3(384);
  config.dynamicSmemBytes = smem_bytes;
  config.attrs = &attribute;
  config.numAttrs = 1;
  int slots = 0;
  AISP_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&slots, Kernel, &config));
  AISP_EXPECTS(slots >= 1, "no 2-CTA cluster of the step-7 kernel fits");
  cache[device] = slots;
  return slots;
}

// TMA needs 16-byte aligned bases and row strides (k x sizeof(element) % 16 == 0: k % 8 for
// bf16, k % 16 for e4m3). With edge tiles on, any m and n go through the TMA path: out-of-bounds
// rows and k columns are zero-filled on load (boxes may overhang the matrix, or lie wholly
// outside it for the second CTA of a cluster) and the epilogue skips them; validation's 130 x 66
// x 40 (bf16) and 130 x 66 x 48 (e4m3) exercise this. Turning it off restricts the TMA path to
// whole tiles (m % (128 x rows_of_ctas), n % 256, k % block_k), the rest to the fallback.
constexpr bool tma_path_takes_edge_tiles = true;

template <class Operands>
bool takes_tma_path(const basic_gemm_problem<typename Operands::element>& p,
                    const device_facts& facts, int tile_rows) {
  const auto aligned16 = [](const void* ptr) {
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0;
  };
  constexpr int k_multiple = 16 / static_cast<int>(sizeof(typename Operands::element));
  const bool whole_tiles =
      p.m % tile_rows == 0 && p.n % block_n == 0 && p.k % Operands::block_k == 0;
  return facts.hopper && p.k % k_multiple == 0 && aligned16(p.a) && aligned16(p.b) &&
         (tma_path_takes_edge_tiles || whole_tiles);
}

template <class Element>
void launch_fallback(const basic_gemm_problem<Element>& p, cudaStream_t stream) {
  constexpr int edge = 16;
  const dim3 grid(static_cast<unsigned>(ceil_div(p.n, edge)),
                  static_cast<unsigned>(ceil_div(p.m, edge)));
  gemm_simt_fallback_kernel<edge, Element>
      <<<grid, dim3(edge, edge), 0, stream>>>(p.a, p.b, p.c, p.m, p.n, p.k);
  AISP_CHECK_LAUNCH();
}

// Step 7 on `Operands`: 2-CTA clusters, B multicast, grouped tile order, persistent.
// Block-scaled (Note [block scales]): `scales` holds both; the caller runs shapes off the TMA path
// (takes_tma_path) itself, since the unscaled SIMT fallback cannot.
template <class Operands, accumulation Accumulate>
void launch_cluster_persistent(const basic_gemm_problem<typename Operands::element>& p,
                               cudaStream_t stream, block_scales scales = {}) {
  AISP_EXPECTS(p.m > 0 && p.n > 0 && p.k > 0, "gemm_problem needs m, n, k >= 1");
  constexpr bool scaled = Accumulate == accumulation::promoted_block_scaled;
  AISP_EXPECTS(!scaled || (scales.a != nullptr && scales.b != nullptr), "a block-scaled GEMM needs both scales");
  const device_facts& facts = facts_for_current_device();
  if (!takes_tma_path<Operands>(p, facts, block_m * cluster_m)) {
    AISP_EXPECTS(!scaled, "a block-scaled GEMM off the TMA path is its caller's to run");
    return launch_fallback(p, stream);
  }
  constexpr auto kernel = cluster_kernel<Operands, Accumulate>;
  const int cluster_slots = cluster_slots_for_current_device<kernel>(facts);
  const CUtensorMap map_a = kmajor_tensor_map<Operands>(p.a, p.m, p.k, block_m);
  // Each CTA of a cluster loads (and multicasts) half of the 256-row B tile.
  const CUtensorMap map_b = kmajor_tensor_map<Operands>(p.b, p.n, p.k, block_n / cluster_m);
  const int tiles = ceil_div(p.m, block_m * cluster_m) * ceil_div(p.n, block_n);
  // Note [balanced grid]: as few clusters as still finish in the same number of rounds. 256
  // cluster tiles (4096^3) on 66 slots take 4 rounds either way, and 64 clusters do exactly 4
  // each: the same critical path with fewer SMs drawing power and L2 bandwidth (an exploratory
  // sweep on the H100: 780 vs 764 TFLOP/s at 4096^3, 802 vs 794 at 8192^3).
  const int rounds = ceil_div(tiles, cluster_slots);
  const int clusters = ceil_div(tiles, rounds);
  cudaLaunchAttribute attribute = cluster_attribute();
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(clusters * cluster_m));
  config.blockDim = dim3(384);
  config.dynamicSmemBytes = smem_bytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  AISP_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, map_a, map_b, p.c, p.m, p.n, p.k, scales));
  AISP_CHECK_LAUNCH();
}

}  // namespace hopper

// Call once outside the timed region (a variant's setup): resolves the driver entry point,
// sets the shared-memory opt-ins and queries cluster occupancy. The launchers do it lazily too.
inline void prepare_hopper_steps() {
  const hopper::device_facts& facts = hopper::facts_for_current_device();
  if (!facts.hopper) return;
  hopper::opt_in_smem_for_current_device<hopper::step5_kernel>();
  hopper::opt_in_smem_for_current_device<hopper::step6_kernel>();
  (void)hopper::cluster_slots_for_current_device<hopper::step7_kernel>(facts);
}

// Names are qualified (no using-directive) so the other steps' constants cannot collide.
inline void launch_wgmma_tma(const gemm_problem& p, cudaStream_t stream) {
  namespace h = hopper;
  AISP_EXPECTS(p.m > 0 && p.n > 0 && p.k > 0, "gemm_problem needs m, n, k >= 1");
  const h::device_facts& facts = h::facts_for_current_device();
  if (!h::takes_tma_path<h::bf16_operands>(p, facts, h::block_m)) return h::launch_fallback(p, stream);
  h::opt_in_smem_for_current_device<h::step5_kernel>();
  const CUtensorMap map_a = h::kmajor_tensor_map<h::bf16_operands>(p.a, p.m, p.k, h::block_m);
  const CUtensorMap map_b = h::kmajor_tensor_map<h::bf16_operands>(p.b, p.n, p.k, h::block_n);
  const dim3 grid(static_cast<unsigned>(h::ceil_div(p.n, h::block_n)),
                  static_cast<unsigned>(h::ceil_div(p.m, h::block_m)));
  h::step5_kernel<<<grid, 256, h::smem_bytes, stream>>>(map_a, map_b, p.c, p.m, p.n, p.k);
  AISP_CHECK_LAUNCH();
}

inline void launch_warp_specialized(const gemm_problem& p, cudaStream_t stream) {
  namespace h = hopper;
  AISP_EXPECTS(p.m > 0 && p.n > 0 && p.k > 0, "gemm_problem needs m, n, k >= 1");
  const h::device_facts& facts = h::facts_for_current_device();
  if (!h::takes_tma_path<h::bf16_operands>(p, facts, h::block_m)) return h::launch_fallback(p, stream);
  h::opt_in_smem_for_current_device<h::step6_kernel>();
  const CUtensorMap map_a = h::kmajor_tensor_map<h::bf16_operands>(p.a, p.m, p.k, h::block_m);
  const CUtensorMap map_b = h::kmajor_tensor_map<h::bf16_operands>(p.b, p.n, p.k, h::block_n);
  const int tiles = h::ceil_div(p.m, h::block_m) * h::ceil_div(p.n, h::block_n);
  const int ctas = tiles < facts.sm_count ? tiles : facts.sm_count;  // persistent: <= 1 per SM
  h::step6_kernel<<<ctas, 384, h::smem_bytes, stream>>>(map_a, map_b, p.c, p.m, p.n, p.k, h::block_scales{});
  AISP_CHECK_LAUNCH();
}

inline void launch_cluster_multicast(const gemm_problem& p, cudaStream_t stream) {
  hopper::launch_cluster_persistent<hopper::bf16_operands, hopper::accumulation::in_tensor_core>(
      p, stream);
}

}  // namespace aisp::labs_gemm
