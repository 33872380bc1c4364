// moe_grouped_gemm: the expert GEMM of a mixture-of-experts layer, after routing: 64 experts, each
// multiplying its own contiguous block of routed rows (ch17:moe_routing's grouped layout) by its
// own weight: y[rows of e] = x[rows of e] · W_e^T, bf16 in, fp32 accumulate, bf16 out. Expert
// counts are uneven (a fixed skew, 1024 rows down to 16 and one idle expert).
// Baseline: a loop of 63 cuBLASLt GEMMs, one per non-empty expert, each autotuned for its shape.
// Optimized: one persistent wgmma kernel (labs/gemm's warp-specialized 128 x 256 x 64 tile: a
// TMA producer warpgroup, two consumer warpgroups) whose tile scheduler walks (expert, m-tile,
// n-tile) over all experts at once. Peer: cublasGemmGroupedBatchedEx, cuBLAS's grouped GEMM.
// Why faster: a single expert's GEMM (16-1024 rows x 2048) fills at most a fraction of the 132 SMs
// and runs in 1-2 short waves with a tail, and the small experts stream 16 MB of weights each at
// HBM speed while the tensor cores idle; the grouped kernel runs 2296 tiles in ~18 full waves
// and overlaps bandwidth-bound experts with compute-bound ones. H100: see README.
// Run: aisp bench run --targets ch15:moe_grouped_gemm
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>  // CUtensorMap and its enums only (aisp/tensor_map_encoder.hpp)
#include <cuda_bf16.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "../../labs/gemm/hopper_tiles.cuh"  // the lab's wgmma tile, smem map and epilogue
#include "aisp/check.hpp"
#include "aisp/cublas_check.hpp"
#include "aisp/cublaslt_plan.hpp"
#include "aisp/device_scratch.hpp"
#include "aisp/hopper_ptx.cuh"
#include "aisp/launch_shape.hpp"
#include "aisp/cublas_handle.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "aisp/tensor_map_encoder.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::ch15 {
namespace {

// Workload: x (rows, k) bf16, the routed token rows grouped by expert (rows = tokens x top_k =
// 16384 x 2); w (experts, n, k) bf16, each expert's weight as nn.Linear stores it (out, in), so
// both operands are K-major (the "TN" GEMM); y (rows, n) bf16. Both inputs uniform in [-1, 1).
// The model: a fine-grained expert like DeepSeek-V3's (FFN width 2048) at a 7B-class hidden size
// of 4096; this is one projection (the up or the gate half) of each expert's FFN.
//
// Note [expert counts]: the rows per expert are a fixed function of (experts, rows), the same
// for every variant and the reference, like a shape: the grouped layout's offsets are known to
// the host, as cuBLAS's grouped API and a per-expert loop need them (an engine copies them from
// the router's device-side offsets; that copy is not timed here). Expert e has weight
// w_e = experts - 1 - (37 e mod experts) (a permutation of 63..0, so big and small experts
// interleave); its count is rows w_e / sum(w), rounded down, and the rows left over go one each
// to the largest remainders (ties to the lower id). At 32768 rows: 1024, 1008, ..., 16 rows
// (16.25 w_e) and one expert with none. Small sizes give experts with 0 or 1 rows, and counts
// that are not multiples of the 128-row tile.
//
// Napkin math at 32768 x 2048 x 4096: 2 rows n k = 550 GFLOP. Fewest bytes: x once (268 MB),
// the 63 used weights once (1.06 GB) and y once (134 MB): 1.46 GB, 0.49 ms at 3.0 TB/s. At
// ~650 TFLOP/s (the lab's warp-specialized kernel) the math takes 0.85 ms: compute-bound
// overall (375 FLOP/byte, ridge ~263), but an expert under ~260 rows is bandwidth-bound alone.
// Baseline: per expert, max(16.8 MB of weights at 3 TB/s = 5.6 us, its FLOPs at the rate one
// expert's 1-2 waves of tiles reach): ~1.2-1.8 ms for the 63 GEMMs. Optimized: 287 m-tiles x 8
// n-tiles = 2296 tiles of 128 x 256 (89% of their FLOPs useful: edge tiles), 17.4 per SM, each
// ~55 us at ~4.9 TFLOP/s an SM: ~1.0 ms (~550 TFLOP/s of useful work). Expected 1.2-1.8x.
//
// Note [grouped gemm tolerance]: the inputs are exact bf16; the products are exact in fp32.
// Errors: (1) each K-term fp32 sum in another order than fp64 (and than other variants), the
// running sum a random walk with |y| ~ sqrt(K / 9) = 21 at K = 4096, the error sigma ~ 2^-24 K /
// sqrt(18) = 5.8e-5, x2 for the tensor cores' truncating alignment; the worst of 67M outputs
// ~6 sigma ~ 7e-4, absolute whatever |y|: atol 5e-3. At the validation sizes (K <= 392) one
// product |ab| ~ 0.25 is still 50x atol. (2) The bf16 output rounds by <= 2^-8 relative against
// fp64, and two variants' roundings of slightly different fp32 sums can sit one bf16 ulp (2^-7
// = 7.8e-3) apart: rtol 1e-2. rel-L2: the rms of bf16 rounding is ~1.7e-3: max 5e-3. cuBLAS's
// split-K is kept to fp32 partial sums (CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE): a bf16 partial
// (INPLACE, OUTPUT_TYPE) would add up to 2^-9 of each partial's magnitude, outside this budget.
// Same numbers as labs/gemm (Note [bf16 gemm tolerance] in bf16_gemm.cu).

constexpr int max_experts = 64;  // the tile scheduler's table travels as a kernel parameter

struct expert_rows {
  std::vector<int> begin;  // expert e: rows [begin[e], begin[e + 1]); begin[experts] = rows
  [[nodiscard]] int count(std::size_t e) const { return begin[e + 1] - begin[e]; }
};

// Note [expert counts]. Integer arithmetic only: every process gets the same layout.
[[nodiscard]] expert_rows expert_layout(std::int64_t experts, std::int64_t rows) {
  AISP_EXPECTS(experts >= 1 && experts <= max_experts && experts % 37 != 0, "1-64 experts (37 e mod experts must permute)");
  AISP_EXPECTS(rows >= 1 && rows <= 0x7fffffff, "rows must fit an int");
  const auto e_count = static_cast<std::size_t>(experts);
  std::vector<std::int64_t> weight(e_count);
  std::int64_t weight_sum = 0;
  for (std::size_t e = 0; e < e_count; ++e) {
    weight[e] = experts - 1 - (37 * static_cast<std::int64_t>(e)) % experts;
    weight_sum += weight[e];
  }
  weight_sum = std::max<std::int64_t>(weight_sum, 1);  // one expert: weight 0, gets every row below
  std::vector<std::int64_t> count(e_count);
  std::vector<std::int64_t> remainder(e_count);
  std::int64_t assigned = 0;
  for (std::size_t e = 0; e < e_count; ++e) {
    count[e] = rows * weight[e] / weight_sum;
    remainder[e] = rows * weight[e] % weight_sum;
    assigned += count[e];
  }
  std::vector<std::size_t> order(e_count);
  for (std::size_t e = 0; e < e_count; ++e) order[e] = e;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
  for (std::size_t i = 0; assigned < rows; ++i, ++assigned) ++count[order[i % e_count]];
  expert_rows layout;
  layout.begin.assign(e_count + 1, 0);
  for (std::size_t e = 0; e < e_count; ++e) layout.begin[e + 1] = layout.begin[e] + static_cast<int>(count[e]);
  return layout;
}

struct problem {
  int experts;
  int rows;
  int n;
  int k;
};

[[nodiscard]] problem problem_of(const run_context& ctx) {
  const std::int64_t rows = ctx.param("rows");
  const std::int64_t n = ctx.param("n");
  const std::int64_t k = ctx.param("k");
  const std::int64_t experts = ctx.param("experts");
  AISP_EXPECTS(k % 8 == 0, "TMA and 16-byte rows need k % 8 == 0 (every declared size has it)");
  AISP_EXPECTS(rows * k <= 0x7fffffff && experts * n * k <= 0x7fffffff && rows * n <= 0x7fffffff,
               "each matrix must hold < 2^31 elements (int GEMM sizes)");
  for (const char* name : {"x", "w", "y"}) {
    AISP_EXPECTS(reinterpret_cast<std::uintptr_t>(ctx.buffer(name)) % 16 == 0, "16-byte aligned operands");
  }
  return {static_cast<int>(experts), static_cast<int>(rows), static_cast<int>(n), static_cast<int>(k)};
}

constexpr std::size_t cublas_workspace_bytes = std::size_t{32} << 20;  // split-K scratch

// ---- Baseline: one cuBLASLt GEMM per non-empty expert ----
// Note [TN through cuBLASLt] (labs/gemm/bf16_gemm.cu): row-major y_e (c, n) is column-major
// y_e^T (n, c) = W_e (n, k) x_e^T (k, c). cuBLASLt's A is W_e read column-major as (k, n), ld k,
// with TRANSA = T; its B is x_e read column-major as (k, c), ld k; D is y_e as (n, c), ld n.
// cublasGemmEx would run the same kernels with the heuristic's first pick; cublasLtMatmul lets
// each expert's shape be autotuned, and keeps split-K partial sums in fp32 (Note [grouped gemm
// tolerance]): the per-expert loop at its best.
struct expert_loop {
  expert_rows layout;
  std::vector<int> experts;  // the non-empty ones, in order
  std::vector<std::unique_ptr<cublaslt_plan>> plans;
  device_scratch workspace{cublas_workspace_bytes};
};

void setup_expert_loop(run_context& ctx) {
  const problem p = problem_of(ctx);
  auto& loop = make_state<expert_loop>(ctx);
  loop.layout = expert_layout(p.experts, p.rows);
  const auto* x = ctx.as<const __nv_bfloat16>("x");
  const auto* w = ctx.as<const __nv_bfloat16>("w");
  int largest = -1;
  for (int e = 0; e < p.experts; ++e) {
    const int rows = loop.layout.count(static_cast<std::size_t>(e));
    if (rows == 0) continue;
    auto plan = std::make_unique<cublaslt_plan>(CUBLAS_COMPUTE_32F, CUDA_R_32F);
    const cublasOperation_t transpose = CUBLAS_OP_T;
    AISP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)));
    plan->layout_a = cublaslt_plan::column_major(CUDA_R_16BF, p.k, p.n, p.k);
    plan->layout_b = cublaslt_plan::column_major(CUDA_R_16BF, p.k, rows, p.k);
    plan->layout_c = cublaslt_plan::column_major(CUDA_R_16BF, p.n, rows, p.n);
    const cublaslt_operands operands{w + static_cast<std::size_t>(e) * p.n * p.k,
                                     x + static_cast<std::size_t>(loop.layout.begin[static_cast<std::size_t>(e)]) * p.k,
                                     loop.workspace.data(), cublas_workspace_bytes};
    plan->autotune_algorithm(ctx, operands, "expert " + std::to_string(e) + "'s GEMM",
                             CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE);
    if (largest < 0 || rows > loop.layout.count(static_cast<std::size_t>(loop.experts[static_cast<std::size_t>(largest)]))) {
      largest = static_cast<int>(loop.plans.size());
    }
    loop.experts.push_back(e);
    loop.plans.push_back(std::move(plan));
  }
  // Every autotune noted its choice under the same key; the largest expert's is the one kept.
  const int e_largest = loop.experts[static_cast<std::size_t>(largest)];
  ctx.note(cublaslt_plan::note_key, "expert " + std::to_string(e_largest) + ": " +
                                        describe(loop.plans[static_cast<std::size_t>(largest)]->choice));
  ctx.note("experts_launched", std::to_string(loop.plans.size()) + " GEMMs a call");
}

void run_expert_loop(run_context& ctx) {
  const problem p = problem_of(ctx);
  const auto& loop = state_of<expert_loop>(ctx);
  const auto* x = ctx.as<const __nv_bfloat16>("x");
  const auto* w = ctx.as<const __nv_bfloat16>("w");
  auto* y = ctx.as<__nv_bfloat16>("y");
  const float alpha = 1.0f;
  const float beta = 0.0f;  // y is written, never read
  for (std::size_t i = 0; i < loop.plans.size(); ++i) {
    const cublaslt_plan& plan = *loop.plans[i];
    const auto row0 = static_cast<std::size_t>(loop.layout.begin[static_cast<std::size_t>(loop.experts[i])]);
    const __nv_bfloat16* w_e = w + static_cast<std::size_t>(loop.experts[i]) * p.n * p.k;
    __nv_bfloat16* y_e = y + row0 * p.n;
    AISP_CUBLAS_CHECK(cublasLtMatmul(plan.handle, plan.desc, &alpha, w_e, plan.layout_a, x + row0 * p.k, plan.layout_b,
                                     &beta, y_e, plan.layout_c, y_e, plan.layout_c, &plan.algo,
                                     loop.workspace.data(), cublas_workspace_bytes, ctx.stream()));
  }
}

// ---- Optimized: one persistent grouped wgmma kernel ----
// Changed: one launch for all experts. labs/gemm's warp-specialized kernel (hopper_tiles.cuh:
// 128 x 256 x 64 tiles, a 4-slot TMA ring on full/empty mbarriers, two consumer warpgroups of
// m64n256k16 wgmma, setmaxnreg 40/232), with a tile scheduler over (expert, m-tile, n-tile).
//
// Note [grouped tiles]: expert e owns m-tiles [tile_begin[e], tile_begin[e + 1]) of 128 rows
// starting at its first row; tile t is m-tile t / tiles_n (a binary search over tile_begin finds
// its expert) and n-tile t % tiles_n, so the ~132 tiles in flight share ~17 A row-panels (each
// read by its 8 n-tiles) and each expert's 8 B panels (read by its m-tiles). CTA c computes tiles
// c, c + grid, ... (all tiles cost the same: 64 k-blocks). One tensor map covers all of x
// (rows, k), one all of w (experts x n, k): an A box past its expert's last row reads the next
// expert's rows (or TMA's zero fill after the last), a B box past n reads the next expert's
// weight rows; the epilogue stores only rows < the expert's end and columns < n, so neither is
// ever written. K is zero-filled past k by TMA.
namespace tiles = labs_gemm::hopper;

struct group_table {
  int row_begin[max_experts + 1];
  int tile_begin[max_experts + 1];
  int experts;
  int n;
  int k;
  int tiles_n;
  int tiles;
};

struct tile_site {
  int a_row;    // first row of the tile in x and y
  int row_end;  // the expert's end: rows from here on belong to the next expert
  int b_row;    // first row of the tile in w viewed as (experts x n, k)
  int col;      // first column of the tile in y
};

__device__ __forceinline__ tile_site locate_tile(const group_table& g, int t) {
  const int m_tile = t / g.tiles_n;
  const int n_tile = t - m_tile * g.tiles_n;
  int lo = 0;  // tile_begin[lo] <= m_tile < tile_begin[hi]: empty experts are never chosen
  int hi = g.experts;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (g.tile_begin[mid] <= m_tile) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return {g.row_begin[lo] + (m_tile - g.tile_begin[lo]) * tiles::block_m, g.row_begin[lo + 1],
          lo * g.n + n_tile * tiles::block_n, n_tile * tiles::block_n};
}

constexpr int producer_registers = 40;   // as in labs/gemm step 6
constexpr int consumer_registers = 232;  // 128 accumulators + addressing
constexpr int kernel_threads = 384;      // a producer and two consumer warpgroups

__global__ void __launch_bounds__(kernel_threads, 1)
    grouped_gemm_wgmma_kernel(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_w,
                              __nv_bfloat16* __restrict__ y, const __grid_constant__ group_table groups) {
#if AISP_HOPPER_DEVICE
  using namespace aisp::hopper;
  extern __shared__ std::uint8_t dynamic_smem[];
  const tiles::smem_map smem(dynamic_smem);
  const int warpgroup = static_cast<int>(threadIdx.x / 128);
  if (threadIdx.x == 0) {
    for (int s = 0; s < tiles::stages; ++s) {
      mbar_init(smem.full(s), 1);                            // the producer's arrive.expect_tx
      mbar_init(smem.empty(s), tiles::consumer_warpgroups);  // one release per consumer warpgroup
    }
    fence_barrier_init();
  }
  __syncthreads();
  const int k_blocks = tiles::ceil_div(groups.k, tiles::block_k);
  if (warpgroup == 0) {
    warpgroup_release_registers<producer_registers>();
    if (threadIdx.x == 0) {  // Note [ring phases] in labs/gemm/steps_hopper.cuh
      prefetch_tensor_map(&map_x);
      prefetch_tensor_map(&map_w);
      int slot = 0;
      std::uint32_t phase = 0;
      for (int t = static_cast<int>(blockIdx.x); t < groups.tiles; t += static_cast<int>(gridDim.x)) {
        const tile_site site = locate_tile(groups, t);
        for (int kb = 0; kb < k_blocks; ++kb) {
          mbar_wait(smem.empty(slot), phase ^ 1u);
          mbar_arrive_expect_tx(smem.full(slot), tiles::stage_bytes);  // out-of-bounds zeros count too
          tma_load_2d(smem.a(slot), &map_x, smem.full(slot), kb * tiles::block_k, site.a_row);
          tma_load_2d(smem.b(slot), &map_w, smem.full(slot), kb * tiles::block_k, site.b_row);
          if (++slot == tiles::stages) {
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
    int slot = 0;
    std::uint32_t phase = 0;
    float acc[128];
    for (int t = static_cast<int>(blockIdx.x); t < groups.tiles; t += static_cast<int>(gridDim.x)) {
      const tile_site site = locate_tile(groups, t);
#pragma unroll
      for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
      fence_accumulators(acc);
      int previous = 0;
      for (int kb = 0; kb < k_blocks; ++kb) {
        mbar_wait(smem.full(slot), phase);
        tiles::mma_k_block(acc, smem.a(slot) + consumer * tiles::a_warpgroup_bytes, smem.b(slot));
        wgmma_wait<1>();  // k-block kb - 1 is read: release its slot (Note [wgmma pipeline])
        if (kb > 0 && thread_in_group == 0) mbar_arrive(smem.empty(previous));
        previous = slot;
        if (++slot == tiles::stages) {
          slot = 0;
          phase ^= 1u;
        }
      }
      wgmma_wait<0>();
      fence_accumulators(acc);
      if (thread_in_group == 0) mbar_arrive(smem.empty(previous));
      // Rows past the expert's end and columns past n are skipped (Note [grouped tiles]).
      tiles::store_warp_rows(acc, smem.staging(consumer * 4 + warp_in_group), y, site.row_end, groups.n,
                             site.a_row + consumer * tiles::warpgroup_rows + 16 * warp_in_group, site.col);
    }
  }
#else
  (void)map_x, (void)map_w, (void)y, (void)groups;
  __trap();
#endif
}

// A (rows, k) K-major bf16 matrix as a 2-D tensor map: 64 (k) x box_rows boxes, 128-byte swizzle
// (the layout the wgmma descriptors of hopper_tiles.cuh read), zeros out of bounds. Encoded on
// the stack in run(), ~1 us, because readdressed buffers move.
[[nodiscard]] CUtensorMap kmajor_tensor_map(const __nv_bfloat16* data, std::int64_t rows, std::int64_t k, int box_rows) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k) * sizeof(__nv_bfloat16)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(tiles::block_k), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult status = tensor_map_encode_function()(
      &map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<__nv_bfloat16*>(data), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  AISP_EXPECTS(status == CUDA_SUCCESS, "cuTensorMapEncodeTiled rejected a grouped GEMM operand");
  return map;
}

struct grouped_plan {
  group_table table{};
  unsigned int grid = 0;
};

void setup_grouped(run_context& ctx) {
  const problem p = problem_of(ctx);
  const expert_rows layout = expert_layout(p.experts, p.rows);
  auto& plan = make_state<grouped_plan>(ctx);
  group_table& g = plan.table;
  g.experts = p.experts;
  g.n = p.n;
  g.k = p.k;
  g.tiles_n = tiles::ceil_div(p.n, tiles::block_n);
  g.row_begin[0] = 0;
  g.tile_begin[0] = 0;
  for (int e = 0; e < p.experts; ++e) {
    g.row_begin[e + 1] = layout.begin[static_cast<std::size_t>(e) + 1];
    g.tile_begin[e + 1] = g.tile_begin[e] + tiles::ceil_div(layout.count(static_cast<std::size_t>(e)), tiles::block_m);
  }
  AISP_EXPECTS(static_cast<std::int64_t>(g.tile_begin[p.experts]) * g.tiles_n <= 0x7fffffff, "tile count fits an int");
  g.tiles = g.tile_begin[p.experts] * g.tiles_n;
  plan.grid = static_cast<unsigned int>(std::min(g.tiles, device_sm_count()));  // persistent: one CTA per SM
  (void)tensor_map_encode_function();  // resolve the driver entry point outside the timed calls
  AISP_CUDA_CHECK(cudaFuncSetAttribute(grouped_gemm_wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       tiles::smem_bytes));
  ctx.note("grouped_tiles", std::to_string(g.tiles) + " tiles of 128 x 256 on " + std::to_string(plan.grid) + " CTAs");
}

void run_grouped(run_context& ctx) {
  const problem p = problem_of(ctx);
  const grouped_plan& plan = state_of<grouped_plan>(ctx);
  const CUtensorMap map_x = kmajor_tensor_map(ctx.as<const __nv_bfloat16>("x"), p.rows, p.k, tiles::block_m);
  const CUtensorMap map_w =
      kmajor_tensor_map(ctx.as<const __nv_bfloat16>("w"), std::int64_t{p.experts} * p.n, p.k, tiles::block_n);
  grouped_gemm_wgmma_kernel<<<plan.grid, kernel_threads, tiles::smem_bytes, ctx.stream()>>>(
      map_x, map_w, ctx.as<__nv_bfloat16>("y"), plan.table);
  AISP_CHECK_LAUNCH();
}

// ---- Peer: cublasGemmGroupedBatchedEx (cuBLAS 12.5+) ----
// One group per non-empty expert (group_size 1: the groups differ in their row count), the
// same TN mapping as the baseline; bf16 A, B, C, CUBLAS_COMPUTE_32F. The per-problem pointers
// live in device memory, written in setup() for the buffers' addresses (setup runs again when
// the harness moves them).
struct grouped_peer {
  std::vector<cublasOperation_t> transa;
  std::vector<cublasOperation_t> transb;
  std::vector<int> m;
  std::vector<int> n;
  std::vector<int> k;
  std::vector<int> lda;
  std::vector<int> ldb;
  std::vector<int> ldc;
  std::vector<int> group_size;
  std::vector<float> alpha;
  std::vector<float> beta;
  std::unique_ptr<device_scratch> pointers;  // [A pointers | B pointers | C pointers], one per group
  std::unique_ptr<device_scratch> workspace;
  cublas_handle blas;  // last: destroyed first, before the workspace it was given
};

// The device arrays of A, B and C pointers of every group, C from `y`.
void write_pointer_arrays(const grouped_peer& peer, const problem& p, const expert_rows& layout,
                          const std::vector<int>& experts, const __nv_bfloat16* x, const __nv_bfloat16* w,
                          __nv_bfloat16* y) {
  std::vector<const void*> pointers(3 * experts.size());
  for (std::size_t g = 0; g < experts.size(); ++g) {
    const auto e = static_cast<std::size_t>(experts[g]);
    const auto row0 = static_cast<std::size_t>(layout.begin[e]);
    pointers[g] = w + e * static_cast<std::size_t>(p.n) * static_cast<std::size_t>(p.k);
    pointers[experts.size() + g] = x + row0 * static_cast<std::size_t>(p.k);
    pointers[2 * experts.size() + g] = y + row0 * static_cast<std::size_t>(p.n);
  }
  AISP_CUDA_CHECK(cudaMemcpy(peer.pointers->data(), pointers.data(), pointers.size() * sizeof(void*),
                             cudaMemcpyHostToDevice));
}

void enqueue_grouped_peer(const grouped_peer& peer) {
  const auto groups = static_cast<int>(peer.m.size());
  auto* const* arrays = static_cast<void* const*>(peer.pointers->data());
  AISP_CUBLAS_CHECK(cublasGemmGroupedBatchedEx(
      peer.blas.handle, peer.transa.data(), peer.transb.data(), peer.m.data(), peer.n.data(), peer.k.data(),
      peer.alpha.data(), arrays, CUDA_R_16BF, peer.lda.data(), arrays + groups, CUDA_R_16BF, peer.ldb.data(),
      peer.beta.data(), arrays + 2 * groups, CUDA_R_16BF, peer.ldc.data(), groups, peer.group_size.data(),
      CUBLAS_COMPUTE_32F));
}

void setup_grouped_peer(run_context& ctx) {
  const problem p = problem_of(ctx);
  const expert_rows layout = expert_layout(p.experts, p.rows);
  auto& peer = make_state<grouped_peer>(ctx);
  AISP_CUBLAS_CHECK(cublasSetStream(peer.blas.handle, ctx.stream()));
  AISP_CUBLAS_CHECK(cublasSetMathMode(peer.blas.handle, CUBLAS_DEFAULT_MATH));  // stated, not changed (W2)
  peer.workspace = std::make_unique<device_scratch>(cublas_workspace_bytes);
  AISP_CUBLAS_CHECK(cublasSetWorkspace(peer.blas.handle, peer.workspace->data(), cublas_workspace_bytes));
  std::vector<int> experts;
  for (int e = 0; e < p.experts; ++e) {
    const int rows = layout.count(static_cast<std::size_t>(e));
    if (rows == 0) continue;
    experts.push_back(e);
    peer.transa.push_back(CUBLAS_OP_T);  // Note [TN through cuBLASLt]: m = n, n = the expert's rows
    peer.transb.push_back(CUBLAS_OP_N);
    peer.m.push_back(p.n);
    peer.n.push_back(rows);
    peer.k.push_back(p.k);
    peer.lda.push_back(p.k);
    peer.ldb.push_back(p.k);
    peer.ldc.push_back(p.n);
    peer.group_size.push_back(1);
    peer.alpha.push_back(1.0f);
    peer.beta.push_back(0.0f);  // y is written, never read
  }
  peer.pointers = std::make_unique<device_scratch>(3 * experts.size() * sizeof(void*));
  const auto* x = ctx.as<const __nv_bfloat16>("x");
  const auto* w = ctx.as<const __nv_bfloat16>("w");
  {  // One call into a scratch y first: the library's first-call work stays out of run().
    const device_scratch scratch_y(static_cast<std::size_t>(p.rows) * static_cast<std::size_t>(p.n) * sizeof(__nv_bfloat16));
    write_pointer_arrays(peer, p, layout, experts, x, w, static_cast<__nv_bfloat16*>(scratch_y.data()));
    enqueue_grouped_peer(peer);
    AISP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  }
  write_pointer_arrays(peer, p, layout, experts, x, w, ctx.as<__nv_bfloat16>("y"));
}

void run_grouped_peer(run_context& ctx) { enqueue_grouped_peer(state_of<grouped_peer>(ctx)); }

// ---- The fp64 reference: every expert's rows times its weight, over the same layout ----
void grouped_reference(reference_io& io) {
  const auto experts = static_cast<std::size_t>(io.param("experts"));
  const auto n = static_cast<std::size_t>(io.param("n"));
  const auto k = static_cast<std::size_t>(io.param("k"));
  const expert_rows layout = expert_layout(io.param("experts"), io.param("rows"));
  const std::span<const double> x = io.input("x");  // (rows, k)
  const std::span<const double> w = io.input("w");  // (experts, n, k)
  const std::span<double> y = io.output("y");       // (rows, n)
  for (std::size_t e = 0; e < experts; ++e) {
    const double* w_e = w.data() + e * n * k;
    for (auto r = static_cast<std::size_t>(layout.begin[e]); r < static_cast<std::size_t>(layout.begin[e + 1]); ++r) {
      for (std::size_t j = 0; j < n; ++j) {  // two contiguous rows per dot product
        double sum = 0.0;
        for (std::size_t q = 0; q < k; ++q) sum += x[r * k + q] * w_e[j * k + q];
        y[r * n + j] = sum;
      }
    }
  }
}

[[nodiscard]] work_amount grouped_work(const workload& work) {
  const auto rows = static_cast<double>(work.get("rows"));
  const auto n = static_cast<double>(work.get("n"));
  const auto k = static_cast<double>(work.get("k"));
  const expert_rows layout = expert_layout(work.get("experts"), work.get("rows"));
  double used_experts = 0;  // an idle expert's weight need not be read
  for (std::size_t e = 0; e + 1 < layout.begin.size(); ++e) used_experts += layout.count(e) > 0 ? 1.0 : 0.0;
  return {.bytes = 2.0 * (rows * k + used_experts * n * k + rows * n), .flops = 2.0 * rows * n * k};
}

const tolerance grouped_gemm_tolerance{
    .rtol = 1e-2,
    .atol = 5e-3,
    .max_rel_l2 = 5e-3,
    .reason = "bf16 output: <= 2^-8 relative vs fp64, two variants one bf16 ulp (7.8e-3) apart -> rtol 1e-2; "
              "fp32 K-sums reordered (tensor cores truncate): worst ~7e-4 absolute at K = 4096 -> atol 5e-3; "
              "rms bf16 rounding 1.7e-3 -> rel-L2 5e-3 (Note [grouped gemm tolerance])"};

[[nodiscard]] variant library_variant(std::string name, std::string summary, stage_fn run, stage_fn setup, stage_fn teardown) {
  variant v;
  v.name = std::move(name);
  v.summary = std::move(summary);
  v.run = std::move(run);
  v.setup = std::move(setup);
  v.teardown = std::move(teardown);
  v.library = "cuBLAS";
  v.math = math_unit::bf16_tensor;
  return v;
}

[[nodiscard]] variant grouped_variant() {
  variant v;
  v.name = "optimized";
  v.summary = "one persistent wgmma kernel (labs/gemm's warp-specialized 128 x 256 x 64 tile) over all experts: "
              "tile scheduler over (expert, m-tile, n-tile), one TMA map for x and one for all of w";
  v.run = run_grouped;
  v.setup = setup_grouped;
  v.teardown = release_state<grouped_plan>;
  v.math = math_unit::bf16_tensor;
  return v;
}

}  // namespace
}  // namespace aisp::ch15

AISP_REGISTER(
    aisp::pair("ch15:moe_grouped_gemm")
        .summary("MoE expert GEMM, 64 experts of skewed size (32768 routed rows, n 2048, k 4096, bf16): a loop of "
                 "per-expert cuBLASLt GEMMs vs one persistent grouped wgmma kernel, and cuBLAS's grouped GEMM")
        .needs_compute_capability(9, 0, "the grouped kernel uses wgmma, TMA and setmaxnreg (sm_90a)")
        .benchmark_size({{"experts", 64}, {"rows", 32768}, {"n", 2048}, {"k", 4096}})
        // Small sizes: most experts empty (1, 7 rows), ragged counts below one tile (100, 700),
        // several m-tiles an expert and more tiles than CTAs (9000 rows, 3 n-tiles: barrier phases
        // carried across tiles); n and k not multiples of the tile (264 = 256 + 8, k 72, 136).
        .validation_size({{"experts", 64}, {"rows", 1}, {"n", 8}, {"k", 8}})
        .validation_size({{"experts", 64}, {"rows", 7}, {"n", 24}, {"k", 16}})
        .validation_size({{"experts", 64}, {"rows", 100}, {"n", 72}, {"k", 64}})
        .validation_size({{"experts", 64}, {"rows", 700}, {"n", 264}, {"k", 136}})
        .validation_size({{"experts", 64}, {"rows", 9000}, {"n", 520}, {"k", 72}})
        // Held out: 156 rows at most (2 m-tiles), 2 n-tiles, 7 k-blocks: the 4-slot ring wraps
        // inside a tile; 518 MFLOP on the host.
        .held_out_size({{"experts", 64}, {"rows", 5003}, {"n", 264}, {"k", 392}})
        .input("x", aisp::dtype::bf16, {"rows", "k"})
        .input("w", aisp::dtype::bf16, {"experts", "n", "k"})
        .output("y", aisp::dtype::bf16, {"rows", "n"})
        .work(aisp::ch15::grouped_work)
        .reference(aisp::ch15::grouped_reference)
        .tolerance_override(aisp::ch15::grouped_gemm_tolerance)
        .tag("moe")
        .tag("gemm")
        .tag("grouped-gemm")
        .tag("tensor-cores")
        .tag("persistent")
        .add_variant(aisp::ch15::library_variant(
            "baseline",
            "a loop of cublasLtMatmul calls, one per non-empty expert (63), each autotuned over the top 16 "
            "heuristic algorithms for its shape, split-K sums in fp32",
            aisp::ch15::run_expert_loop, aisp::ch15::setup_expert_loop,
            aisp::release_state<aisp::ch15::expert_loop>))
        .add_variant(aisp::ch15::grouped_variant())
        .add_variant(aisp::ch15::library_variant(
            "peer_cublas",
            "cublasGemmGroupedBatchedEx: one group per non-empty expert, bf16, CUBLAS_COMPUTE_32F, one call",
            aisp::ch15::run_grouped_peer, aisp::ch15::setup_grouped_peer,
            aisp::release_state<aisp::ch15::grouped_peer>)));
