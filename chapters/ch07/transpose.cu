// transpose: out[c][r] = in[r][c] for an fp32 matrix, (rows, cols) -> (cols, rows), row-major.
// Baseline: naive, one 32 x 32 tile per block: coalesced reads, writes strided by `rows`.
// Optimized: stage the tile in shared memory padded to 33 columns, then write it coalesced.
// Why faster: a warp writing down an output column touches 32 sectors of 32 B, each carrying 4
// useful bytes: 8x the L2 write transactions of a coalesced row. Through shared memory both the
// read and the write of a warp are 128 contiguous bytes, and the +1 padding puts the 32 values
// of a tile column in 32 different banks. HBM-bound: 2 x 256 MiB ~= 180 us at 3.0 TB/s.
// H100: see README.
// Peer: cuBLAS's fp32 transpose, cublasSgeam with alpha = 1 and beta = 0.
// Run: aisp bench run --targets ch07:transpose
#include <cublas_v2.h>

#include <cstdint>
#include <limits>

#include "aisp/check.hpp"
#include "aisp/cublas_check.hpp"
#include "aisp/cublas_handle.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::ch07 {
namespace {

// Workload: input (rows, cols) fp32 row-major, output (cols, rows) fp32 row-major.
// Napkin math: bytes = 4 * rows * cols read + 4 * rows * cols written, no FLOPs.
// At 8192 x 8192 that is 512 MiB per iteration: ~180 us at 3.0 TB/s.
//
// Both variants use the same launch: a (32, 8) block per 32 x 32 tile, each thread moving 4
// elements, one per 8-row step (the layout of NVIDIA's "Efficient Matrix Transpose" post).
//
// Note [bank math]: shared memory has 32 banks of 4 bytes; word w lives in bank w % 32. The
// optimized write phase has lane i read tile[i][r], word 33 i + r with the pad (bank (i + r) % 32:
// 32 distinct banks, one wavefront) and word 32 i + r without it (bank r % 32 for every lane: a
// 32-way conflict, 32 wavefronts). The read phase writes tile[r][i], consecutive words either way.
//
// Note [write sectors]: per 32 x 32 tile the naive kernel issues 32 warp stores x 32 sectors =
// 1024 partial-sector (4-byte) writes to L2 where 128 full sectors suffice: 8x the requests.
// L2 merges them before HBM, so the cost is L2 request throughput, not DRAM bytes.

constexpr int tile_dim = 32;
constexpr int block_rows = 8;  // blockDim.y; each thread covers tile_dim / block_rows rows
static_assert(tile_dim % block_rows == 0);
constexpr std::int64_t max_grid_y = 65535;

[[nodiscard]] dim3 tile_grid(std::int64_t rows, std::int64_t cols) {
  const std::int64_t tiles_x = (cols + tile_dim - 1) / tile_dim;  // along input columns
  const std::int64_t tiles_y = (rows + tile_dim - 1) / tile_dim;  // along input rows
  AISP_EXPECTS(tiles_y <= max_grid_y, "rows exceed 65535 tiles of 32 (gridDim.y limit)");
  return {static_cast<unsigned int>(tiles_x), static_cast<unsigned int>(tiles_y)};
}

// ---- Baseline: naive transpose ----
// Lanes take consecutive input columns: reads are 128 contiguous bytes per warp, but lane i
// writes output row col + i, so the warp's 32 stores land 4 * rows bytes apart.
__global__ void transpose_naive_kernel(const float* __restrict__ input,
                                       float* __restrict__ output, std::int64_t rows,
                                       std::int64_t cols) {
  const std::int64_t col = std::int64_t{blockIdx.x} * tile_dim + threadIdx.x;
  const std::int64_t row_base = std::int64_t{blockIdx.y} * tile_dim + threadIdx.y;
  if (col >= cols) {
    return;
  }
#pragma unroll
  for (int step = 0; step < tile_dim; step += block_rows) {
    const std::int64_t row = row_base + step;
    if (row < rows) {
      output[col * rows + row] = input[row * cols + col];
    }
  }
}

void launch_baseline(run_context& ctx) {
  const std::int64_t rows = ctx.param("rows");
  const std::int64_t cols = ctx.param("cols");
  transpose_naive_kernel<<<tile_grid(rows, cols), dim3(tile_dim, block_rows), 0, ctx.stream()>>>(
      ctx.as<const float>("input"), ctx.as<float>("output"), rows, cols);
  AISP_CHECK_LAUNCH();
}

// ---- Optimized: shared-memory tile, padded ----
// Changed: the block reads its 32 x 32 tile row by row into shared memory, then each warp writes
// one output row of the tile (an input column) as 128 contiguous bytes. Reading tile[lane][r]
// walks a column of the shared tile; with 33 floats per row, lane i hits bank (33 i + r) % 32,
// all different. Without the pad every lane would hit the same bank: a 32-way conflict.
__global__ void transpose_smem_tile_kernel(const float* __restrict__ input,
                                           float* __restrict__ output, std::int64_t rows,
                                           std::int64_t cols) {
  __shared__ float tile[tile_dim][tile_dim + 1];

  const std::int64_t in_col = std::int64_t{blockIdx.x} * tile_dim + threadIdx.x;
  const std::int64_t in_row_base = std::int64_t{blockIdx.y} * tile_dim + threadIdx.y;
#pragma unroll
  for (int step = 0; step < tile_dim; step += block_rows) {
    const std::int64_t row = in_row_base + step;
    if (row < rows && in_col < cols) {
      tile[threadIdx.y + step][threadIdx.x] = input[row * cols + in_col];
    }
  }
  __syncthreads();

  // Output (cols, rows): this block writes output rows [blockIdx.x * 32, +32) (input columns)
  // and output columns [blockIdx.y * 32, +32) (input rows). Lanes take consecutive columns.
  const std::int64_t out_col = std::int64_t{blockIdx.y} * tile_dim + threadIdx.x;
  const std::int64_t out_row_base = std::int64_t{blockIdx.x} * tile_dim + threadIdx.y;
#pragma unroll
  for (int step = 0; step < tile_dim; step += block_rows) {
    const std::int64_t out_row = out_row_base + step;
    if (out_row < cols && out_col < rows) {
      output[out_row * rows + out_col] = tile[threadIdx.x][threadIdx.y + step];
    }
  }
}

void launch_optimized(run_context& ctx) {
  const std::int64_t rows = ctx.param("rows");
  const std::int64_t cols = ctx.param("cols");
  transpose_smem_tile_kernel<<<tile_grid(rows, cols), dim3(tile_dim, block_rows), 0,
                               ctx.stream()>>>(ctx.as<const float>("input"),
                                               ctx.as<float>("output"), rows, cols);
  AISP_CHECK_LAUNCH();
}

// ---- Peer: cuBLAS geam ----
// cublasSgeam computes C = alpha op(A) + beta op(B) in column-major terms; alpha = 1, beta = 0
// and op(A) = A^T is cuBLAS's own transpose. A row-major (r, c) matrix read as column-major is
// its (c, r) transpose, so the input is column-major A (cols, rows; ld cols) and the output
// column-major C (rows, cols; ld rows) = A^T: no copies, exactly out[c][r] = in[r][c].
// B is the input again (same op and ld): with beta = 0 it adds nothing, and were it read,
// x + 0 * x == x for every finite x, signed zeros included.
void setup_cublas(run_context& ctx) {
  const auto& blas = make_state<cublas_handle>(ctx);
  AISP_CUBLAS_CHECK(cublasSetStream(blas.handle, ctx.stream()));
  // fp32 in, fp32 out, no tensor cores: the default policy, stated (W2 watches this call).
  AISP_CUBLAS_CHECK(cublasSetMathMode(blas.handle, CUBLAS_DEFAULT_MATH));
}

void run_cublas(run_context& ctx) {
  const std::int64_t rows = ctx.param("rows");
  const std::int64_t cols = ctx.param("cols");
  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  AISP_EXPECTS(rows <= int_max && cols <= int_max, "cublasSgeam takes int dimensions");
  const auto m = static_cast<int>(rows);  // C (m, n) column-major = the (cols, rows) output
  const auto n = static_cast<int>(cols);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const auto* input = ctx.as<const float>("input");
  AISP_CUBLAS_CHECK(cublasSgeam(state_of<cublas_handle>(ctx).handle, CUBLAS_OP_T, CUBLAS_OP_T, m,
                                n, &alpha, input, n, &beta, input, n, ctx.as<float>("output"),
                                m));
}

[[nodiscard]] variant cublas_peer() {
  variant peer = kit::with_state("peer_cublas",
                                 "cublasSgeam, op(A) = A^T, alpha 1, beta 0: cuBLAS's transpose",
                                 run_cublas, setup_cublas, release_state<cublas_handle>);
  peer.library = "cuBLAS";
  return peer;
}

[[nodiscard]] std::int64_t matrix_elements(const workload& w) {
  return w.get("rows") * w.get("cols");
}

}  // namespace
}  // namespace aisp::ch07

AISP_REGISTER(
    aisp::pair("ch07:transpose")
        .summary("fp32 matrix transpose: naive strided writes vs padded shared-memory tile")
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
          const auto rows = static_cast<std::size_t>(io.param("rows"));
          const auto cols = static_cast<std::size_t>(io.param("cols"));
          const std::span<const double> input = io.input("input");    // (rows, cols)
          const std::span<double> output = io.output("output");       // (cols, rows)
          for (std::size_t r = 0; r < rows; ++r) {
            for (std::size_t c = 0; c < cols; ++c) {
              output[c * rows + r] = input[r * cols + c];
            }
          }
        })
        .add_variant("baseline", "naive: coalesced reads, writes strided by rows",
                     aisp::ch07::launch_baseline)
        .add_variant("optimized", "32 x 33 shared-memory tile: coalesced reads and writes",
                     aisp::ch07::launch_optimized)
        .add_variant(aisp::ch07::cublas_peer()));
