// matrix_sum: column sums of a row-major fp64 matrix, (rows, cols) -> (cols,). Host pair.
// Baseline: for each column, walk down the rows: every load is 8 * cols bytes past the last.
// Optimized: walk the matrix in memory order, adding each row into the output vector.
// Why faster: at 4096 columns a column step is 32 KB, a new cache line and a new 4 KB page on
// every load: 1 useful double per 64-byte line fetched and a TLB miss per element, with no
// hardware prefetch. In row order each line gives 8 doubles, the prefetcher streams ahead, the
// 32 KB output stays in L1, and the inner loop vectorizes. 128 MiB at ~10-20 GB/s on one core:
// ~7-13 ms. H100 host: see README.
// Run: aisp bench run --targets labs/host:matrix_sum
#include <cstddef>
#include <cstdint>
#include <span>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"

namespace aisp::labs_host {
namespace {

// Workload: input (rows, cols) fp64 row-major; output column_sums (cols,) fp64.
// Napkin math: bytes = 8 * rows * cols read + 8 * cols written; FLOPs = rows * cols adds.
// 4096 x 4096: 128 MiB, far above any last-level cache slice a single core can use.
//
// Both variants add the rows of each column in the same order (row 0 first), so their results
// are bitwise equal; only the traversal order of memory differs.

struct matrix_view {
  const double* values;
  std::size_t rows;
  std::size_t cols;
};

[[nodiscard]] matrix_view input_matrix(const run_context& ctx) {
  return {ctx.as<const double>("input"), static_cast<std::size_t>(ctx.param("rows")),
          static_cast<std::size_t>(ctx.param("cols"))};
}

// ---- Baseline: column by column ----
void column_sums_column_walk(run_context& ctx) {
  const matrix_view m = input_matrix(ctx);
  auto* column_sums = ctx.as<double>("column_sums");
  for (std::size_t c = 0; c < m.cols; ++c) {
    double total = 0.0;
    for (std::size_t r = 0; r < m.rows; ++r) {
      total += m.values[r * m.cols + c];  // stride: 8 * cols bytes
    }
    column_sums[c] = total;
  }
}

// ---- Optimized: row by row into the output vector ----
// Changed: the loops are interchanged. Row 0 initializes the sums (no separate zeroing pass),
// then each later row is added element-wise: unit stride on both the matrix and the output.
void column_sums_row_walk(run_context& ctx) {
  const matrix_view m = input_matrix(ctx);
  auto* column_sums = ctx.as<double>("column_sums");
  for (std::size_t c = 0; c < m.cols; ++c) {
    column_sums[c] = m.values[c];
  }
  for (std::size_t r = 1; r < m.rows; ++r) {
    const double* row = m.values + r * m.cols;
    for (std::size_t c = 0; c < m.cols; ++c) {
      column_sums[c] += row[c];  // stride: 8 bytes
    }
  }
}

[[nodiscard]] std::int64_t matrix_elements(const workload& w) {
  return w.get("rows") * w.get("cols");
}

[[nodiscard]] std::int64_t column_count(const workload& w) { return w.get("cols"); }

}  // namespace
}  // namespace aisp::labs_host

AISP_REGISTER(
    aisp::pair("labs/host:matrix_sum")
        .summary("fp64 column sums on the host: column-order walk vs row-order walk")
        .on(aisp::backend::host)
        .benchmark_size({{"rows", 4096}, {"cols", 4096}})
        .validation_size({{"rows", 1}, {"cols", 1}})
        .validation_size({{"rows", 7}, {"cols", 65}})
        .validation_size({{"rows", 65}, {"cols", 7}})
        .validation_size({{"rows", 1000}, {"cols", 33}})
        .held_out_size({{"rows", 3001}, {"cols", 2049}})
        .input("input", aisp::dtype::f64, aisp::labs_host::matrix_elements)
        .output("column_sums", aisp::dtype::f64, aisp::labs_host::column_count)
        .exact_math()  // small-integer inputs give bitwise-exact results (X5 challenge)
        .work([](const aisp::workload& w) {
          const double elements = static_cast<double>(w.get("rows") * w.get("cols"));
          const double cols = static_cast<double>(w.get("cols"));
          return aisp::work_amount{.bytes = 8.0 * elements + 8.0 * cols, .flops = elements};
        })
        .reference([](aisp::reference_io& io) {
          const auto rows = static_cast<std::size_t>(io.param("rows"));
          const auto cols = static_cast<std::size_t>(io.param("cols"));
          const std::span<const double> input = io.input("input");  // (rows, cols)
          const std::span<double> sums = io.output("column_sums");  // (cols,)
          for (std::size_t c = 0; c < cols; ++c) {
            sums[c] = 0.0;
          }
          for (std::size_t i = 0; i < rows * cols; ++i) {
            sums[i % cols] += input[i];
          }
        })
        .add_variant("baseline", "one column at a time: every load 8 * cols bytes apart",
                     aisp::labs_host::column_sums_column_walk)
        .add_variant("optimized", "loops interchanged: rows in memory order into the sums",
                     aisp::labs_host::column_sums_row_walk));
