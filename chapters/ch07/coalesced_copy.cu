// coalesced_copy: copy a row-major fp32 matrix, (rows, cols) -> (rows, cols).
// Baseline: threadIdx.x walks down a column, so a warp's 32 lanes touch 32 different rows.
// Optimized: threadIdx.x walks along a row, so a warp's 32 lanes touch 128 contiguous bytes.
// Why faster: a warp access of 32 floats in one row is 4 sectors of 32 B; down a column it is 32
// sectors, each carrying 4 useful bytes. The baseline makes 8x the L1/L2 transactions per byte and
// runs out of transaction throughput long before HBM; the optimized one is HBM-bound:
// 2 x 256 MiB at ~3.0 TB/s ~= 180 us at the benchmark size. H100: see README.
// Peer: cudaMemcpyAsync device to device (both matrices are one contiguous row-major span, so
// the copy is one call of rows * cols * 4 bytes): what the optimized kernel should approach.
// Run: aisp bench run --targets ch07:coalesced_copy
#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"

namespace aisp::ch07 {
namespace {

// Workload: input (rows, cols) fp32 row-major, output (rows, cols) fp32 row-major.
// Napkin math: bytes = 4 * rows * cols read + 4 * rows * cols written, no FLOPs.
// At 8192 x 8192 that is 512 MiB per iteration: ~180 us at 3.0 TB/s.
//
// Note [column walk]: both variants launch the same grid, one 32 x 32 tile per (32, 8) block,
// each thread moving 4 elements (one per 8-step), so both have the same work per thread and the
// same loads in flight. The only difference is which tile axis threadIdx.x is mapped to. Mapping
// x to rows is the classic first-CUDA-kernel mistake: it is correct and looks symmetric on paper.
//
// Note [sector accounting]: per 32 x 32 tile (4 KB in, 4 KB out), in 32-byte sectors:
//   optimized: 32 warp loads x 4 sectors = 128 sector reads, 32 warp stores x 4 = 128 writes;
//              every byte fetched is used, and L1 handles one 128-byte line per instruction.
//   baseline:  32 warp loads x 32 sectors = 1024 sector lookups in L1 (32 lines per instruction);
//              L1 catches the re-use across the block's warps, so L2 still sees ~128 reads, but
//              the stores bypass L1: 32 warp stores x 32 sectors = 1024 partial-sector writes of
//              4 bytes to L2, 8x the optimized count. L2 merges them, so HBM sees about the same
//              bytes; what runs out is L1 and L2 request throughput, not DRAM bandwidth.
// Expected: the optimized kernel near the ~3.0 TB/s copy ceiling, the baseline several times
// slower at any size large enough to leave L2.

constexpr int tile_dim = 32;
constexpr int block_rows = 8;  // blockDim.y; each thread covers tile_dim / block_rows steps
static_assert(tile_dim % block_rows == 0);
constexpr std::int64_t max_grid_y = 65535;

[[nodiscard]] dim3 tile_grid(std::int64_t rows, std::int64_t cols) {
  const std::int64_t tiles_x = (cols + tile_dim - 1) / tile_dim;
  const std::int64_t tiles_y = (rows + tile_dim - 1) / tile_dim;
  AISP_EXPECTS(tiles_y <= max_grid_y, "rows exceed 65535 tiles of 32 (gridDim.y limit)");
  return {static_cast<unsigned int>(tiles_x), static_cast<unsigned int>(tiles_y)};
}

// ---- Baseline: consecutive lanes walk down a column ----
// Lane i copies row tile_row + i: the warp's 32 addresses are 4 * cols bytes apart, one 32-byte
// sector each, 4 useful bytes per sector (the other warps of the block use the rest of each
// sector on loads, through L1; stores go to L2 as 32 partial-sector writes per warp).
__global__ void copy_column_walk_kernel(const float* __restrict__ input,
                                        float* __restrict__ output, std::int64_t rows,
                                        std::int64_t cols) {
  const std::int64_t row = std::int64_t{blockIdx.y} * tile_dim + threadIdx.x;
  const std::int64_t col_base = std::int64_t{blockIdx.x} * tile_dim + threadIdx.y;
  if (row >= rows) {
    return;
  }
#pragma unroll
  for (int step = 0; step < tile_dim; step += block_rows) {
    const std::int64_t col = col_base + step;
    if (col < cols) {
      output[row * cols + col] = input[row * cols + col];  // lane stride: cols elements
    }
  }
}

void launch_baseline(run_context& ctx) {
  const std::int64_t rows = ctx.param("rows");
  const std::int64_t cols = ctx.param("cols");
  copy_column_walk_kernel<<<tile_grid(rows, cols), dim3(tile_dim, block_rows), 0,
                            ctx.stream()>>>(ctx.as<const float>("input"), ctx.as<float>("output"),
                                            rows, cols);
  AISP_CHECK_LAUNCH();
}

// ---- Optimized: consecutive lanes walk along a row ----
// Changed: threadIdx.x indexes columns, so each warp access is 128 contiguous bytes: 4 sectors.
__global__ void copy_row_walk_kernel(const float* __restrict__ input, float* __restrict__ output,
                                     std::int64_t rows, std::int64_t cols) {
  const std::int64_t col = std::int64_t{blockIdx.x} * tile_dim + threadIdx.x;
  const std::int64_t row_base = std::int64_t{blockIdx.y} * tile_dim + threadIdx.y;
  if (col >= cols) {
    return;
  }
#pragma unroll
  for (int step = 0; step < tile_dim; step += block_rows) {
    const std::int64_t row = row_base + step;
    if (row < rows) {
      output[row * cols + col] = input[row * cols + col];  // lane stride: 1 element
    }
  }
}

void launch_optimized(run_context& ctx) {
  const std::int64_t rows = ctx.param("rows");
  const std::int64_t cols = ctx.param("cols");
  copy_row_walk_kernel<<<tile_grid(rows, cols), dim3(tile_dim, block_rows), 0, ctx.stream()>>>(
      ctx.as<const float>("input"), ctx.as<float>("output"), rows, cols);
  AISP_CHECK_LAUNCH();
}

[[nodiscard]] std::int64_t matrix_elements(const workload& w) {
  return w.get("rows") * w.get("cols");
}

}  // namespace
}  // namespace aisp::ch07

AISP_REGISTER(
    aisp::pair("ch07:coalesced_copy")
        .summary("fp32 matrix copy: column-walking lanes vs row-walking (coalesced) lanes")
        .benchmark_size({{"rows", 8192}, {"cols", 8192}})
        .validation_size({{"rows", 1}, {"cols", 1}})
        .validation_size({{"rows", 7}, {"cols", 65}})
        .validation_size({{"rows", 65}, {"cols", 7}})
        .validation_size({{"rows", 1000}, {"cols", 33}})
        .held_out_size({{"rows", 3001}, {"cols", 4097}})
        .input("input", aisp::dtype::f32, aisp::ch07::matrix_elements)
        .output("output", aisp::dtype::f32, aisp::ch07::matrix_elements)
        .exact_math()  // small-integer inputs give bitwise-exact results (X5 challenge)
        .work([](const aisp::workload& w) {
          const double elements = static_cast<double>(w.get("rows") * w.get("cols"));
          return aisp::work_amount{.bytes = 2.0 * 4.0 * elements, .flops = 0.0};
        })
        .reference([](aisp::reference_io& io) {
          const std::span<const double> input = io.input("input");
          const std::span<double> output = io.output("output");
          for (std::size_t i = 0; i < input.size(); ++i) {
            output[i] = input[i];
          }
        })
        .add_variant("baseline", "threadIdx.x walks down a column: 32 sectors per warp access",
                     aisp::ch07::launch_baseline)
        .add_variant("optimized", "threadIdx.x walks along a row: 4 sectors per warp access",
                     aisp::ch07::launch_optimized)
        .add_variant(aisp::kit::memcpy_peer("input", "output")));
