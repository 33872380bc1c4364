// transpose: out[c][r] = in[r][c] for an fp32 matrix, (rows, cols) -> (cols, rows). Host pair.
// Baseline: the naive double loop: reads in order, writes strided by 4 * rows bytes.
// Optimized: cache blocking: 32 x 32 tiles, written as whole 128-byte output row segments.
// Why faster: naively, each store lands on a new 64-byte line that is needed again only 16
// stores later (the next r), after the loop has touched `cols` other output lines. At 4096 rows
// those lines are 16 KB apart and alias to a few cache sets, so they are evicted in between: each
// line is read for ownership and written back up to 16 times. A 32 x 32 tile reads 32 input
// rows (4 KB of lines, reused for 32 columns) and writes each output line in one burst.
// 2 x 64 MiB, several times a memcpy's time on one core. H100 host: see README.
// Run: aisp bench run --targets labs/host:transpose
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"

namespace aisp::labs_host {
namespace {

// Workload: input (rows, cols) fp32 row-major; output (cols, rows) fp32 row-major.
// Napkin math: bytes = 4 * rows * cols read + 4 * rows * cols written, no FLOPs.
// Benchmark 4096 x 4096: 64 MiB each way, well above the last-level cache share of one core.
//
// Note [power-of-two strides]: 4096 rows puts the naive loop's 4096 live output lines 16 KB
// apart, the worst case for set-associative caches and the size people actually transpose. At
// sizes without that aliasing (e.g. 4000 x 4000) the naive loop's 4000 live lines (256 KB) can
// fit in a core's L2, and the gap between the variants shrinks to ~1.3x.

constexpr std::size_t tile = 32;  // 32 x 4 B = 128 B: two cache lines per tile row

struct transpose_args {
  const float* input;
  float* output;
  std::size_t rows;
  std::size_t cols;
};

[[nodiscard]] transpose_args args_of(const run_context& ctx) {
  return {ctx.as<const float>("input"), ctx.as<float>("output"),
          static_cast<std::size_t>(ctx.param("rows")),
          static_cast<std::size_t>(ctx.param("cols"))};
}

// ---- Baseline: naive ----
void transpose_naive(run_context& ctx) {
  const transpose_args a = args_of(ctx);
  for (std::size_t r = 0; r < a.rows; ++r) {
    for (std::size_t c = 0; c < a.cols; ++c) {
      a.output[c * a.rows + r] = a.input[r * a.cols + c];  // write stride: 4 * rows bytes
    }
  }
}

// ---- Optimized: 32 x 32 tiles ----
// Changed: the loops run tile by tile, and inside a tile the column loop is outside: each c
// writes one output row segment of up to 32 contiguous floats (two whole cache lines at once),
// reading one float from each of the tile's input rows, which stay cached for the next c.
// Edge tiles are clipped with std::min, so any shape (1 x 1, 7 x 65, odd sizes) is covered.
void transpose_tiled(run_context& ctx) {
  const transpose_args a = args_of(ctx);
  for (std::size_t row_start = 0; row_start < a.rows; row_start += tile) {
    const std::size_t row_end = std::min(row_start + tile, a.rows);
    for (std::size_t col_start = 0; col_start < a.cols; col_start += tile) {
      const std::size_t col_end = std::min(col_start + tile, a.cols);
      for (std::size_t c = col_start; c < col_end; ++c) {
        float* out_segment = a.output + c * a.rows;  // output row c, unit stride in r
        for (std::size_t r = row_start; r < row_end; ++r) {
          out_segment[r] = a.input[r * a.cols + c];
        }
      }
    }
  }
}

[[nodiscard]] std::int64_t matrix_elements(const workload& w) {
  return w.get("rows") * w.get("cols");
}

}  // namespace
}  // namespace aisp::labs_host

AISP_REGISTER(
    aisp::pair("labs/host:transpose")
        .summary("fp32 transpose on the host: naive loops vs 32 x 32 cache blocking")
        .on(aisp::backend::host)
        .benchmark_size({{"rows", 4096}, {"cols", 4096}})
        .validation_size({{"rows", 1}, {"cols", 1}})
        .validation_size({{"rows", 7}, {"cols", 65}})
        .validation_size({{"rows", 65}, {"cols", 7}})
        .validation_size({{"rows", 1000}, {"cols", 33}})
        .held_out_size({{"rows", 3001}, {"cols", 2049}})
        .input("input", aisp::dtype::f32, aisp::labs_host::matrix_elements)
        .output("output", aisp::dtype::f32, aisp::labs_host::matrix_elements)
        .exact_math()  // small-integer inputs give bitwise-exact results (X5 challenge)
        .work([](const aisp::workload& w) {
          const double elements = static_cast<double>(w.get("rows") * w.get("cols"));
          return aisp::work_amount{.bytes = 2.0 * 4.0 * elements, .flops = 0.0};
        })
        .reference([](aisp::reference_io& io) {
          const auto rows = static_cast<std::size_t>(io.param("rows"));
          const auto cols = static_cast<std::size_t>(io.param("cols"));
          const std::span<const double> input = io.input("input");  // (rows, cols)
          const std::span<double> output = io.output("output");     // (cols, rows)
          for (std::size_t i = 0; i < rows * cols; ++i) {
            const std::size_t r = i / cols;
            const std::size_t c = i % cols;
            output[c * rows + r] = input[i];
          }
        })
        .add_variant("baseline", "naive double loop: reads in order, writes strided by rows",
                     aisp::labs_host::transpose_naive)
        .add_variant("optimized", "32 x 32 tiles: whole output lines per burst, input rows reused",
                     aisp::labs_host::transpose_tiled));
