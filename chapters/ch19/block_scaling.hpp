// ch19 (issue 19): fp8 e4m3 with fp32 scales, per tensor against per block (DeepSeek-V3's recipe:
// a scale per 1 x 128 of the activations, per 128 x 128 of the weights), on the host in fp64.
// What the block-scaled fp8 GEMM pair will be judged against, and the accuracy difference the
// issue asks for: a scale shared by a whole tensor is set by its largest value, so rows or
// blocks far smaller than that fall below e4m3's 2^-9 and round to zero or to a few levels; a
// scale a block follows each block's own range. Host-only and header-only: unit-tested here
// (tests/unit/block_scaling_test.cpp), the pair's reference later.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "support/fp8_codec.hpp"

namespace aisp::ch19 {

inline constexpr double e4m3_max = 448.0;

// A (rows, cols) row-major matrix as e4m3 values and one fp32 scale a (block_rows, block_cols)
// block: element (r, c) is values[r cols + c] x scales[(r / block_rows) blocks_across + c / block_cols].
struct quantized_matrix {
  int rows = 0, cols = 0, block_rows = 0, block_cols = 0;
  std::vector<double> values;  // e4m3 values, exactly
  std::vector<double> scales;  // fp32 values, exactly
  [[nodiscard]] int blocks_across() const { return (cols + block_cols - 1) / block_cols; }
  [[nodiscard]] double scale_of(int r, int c) const {
    return scales[static_cast<std::size_t>(r / block_rows) * static_cast<std::size_t>(blocks_across()) + static_cast<std::size_t>(c / block_cols)];
  }
  [[nodiscard]] double dequantized(int r, int c) const {
    return values[static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c)] * scale_of(r, c);
  }
};

[[nodiscard]] inline double round_to_e4m3(double x) {
  return fp8_bits_to_float(float_to_fp8_bits(static_cast<float>(x), fp8_format::e4m3), fp8_format::e4m3);
}

// Each block's scale maps its largest magnitude to e4m3's largest (448), rounded to fp32; a block
// of zeros gets scale 1. Blocks of the whole matrix: per-tensor scaling.
[[nodiscard]] inline quantized_matrix quantize(const std::vector<double>& x, int rows, int cols, int block_rows, int block_cols) {
  if (rows < 1 || cols < 1 || block_rows < 1 || block_cols < 1 || x.size() != static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols))
    throw std::invalid_argument("quantize: a rows x cols matrix and blocks of at least 1 x 1");
  quantized_matrix q{rows, cols, block_rows, block_cols, std::vector<double>(x.size()), {}};
  const int blocks_down = (rows + block_rows - 1) / block_rows;
  q.scales.assign(static_cast<std::size_t>(blocks_down) * static_cast<std::size_t>(q.blocks_across()), 1.0);
  const auto at = [&](int r, int c) { return static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c); };
  for (int br = 0; br < blocks_down; ++br) {
    for (int bc = 0; bc < q.blocks_across(); ++bc) {
      const int r_end = std::min(rows, (br + 1) * block_rows);
      const int c_end = std::min(cols, (bc + 1) * block_cols);
      double largest = 0;
      for (int r = br * block_rows; r < r_end; ++r) {
        for (int c = bc * block_cols; c < c_end; ++c) largest = std::max(largest, std::fabs(x[at(r, c)]));
      }
      const double scale = largest > 0 ? static_cast<double>(static_cast<float>(largest / e4m3_max)) : 1.0;
      q.scales[static_cast<std::size_t>(br) * static_cast<std::size_t>(q.blocks_across()) + static_cast<std::size_t>(bc)] = scale;
      for (int r = br * block_rows; r < r_end; ++r) {
        for (int c = bc * block_cols; c < c_end; ++c) q.values[at(r, c)] = round_to_e4m3(x[at(r, c)] / scale);
      }
    }
  }
  return q;
}

// How far the product of the dequantized operands, C = A B^T (A: m x k, B: n x k, fp64 sums), is
// from the product of the originals: relative L2 over all of C (the large rows dominate it), and
// the worst row's relative L2 (a token's output against its own norm: what a small token loses).
struct product_error {
  double relative_l2 = 0;
  double worst_row_relative_l2 = 0;
};

// The error of `approx(i, j)` (any product of A (m x k) and B (n x k) in C's layout) against
// the fp64 product of A and B, measured as product_error says.
template <class Approx>
[[nodiscard]] product_error product_error_of(const std::vector<double>& a, const std::vector<double>& b, int m, int n, int k,
                                             Approx approx) {
  double error_squares = 0, exact_squares = 0, worst_row = 0;
  for (int i = 0; i < m; ++i) {
    double row_error = 0, row_exact = 0;
    for (int j = 0; j < n; ++j) {
      double exact = 0;
      for (int p = 0; p < k; ++p) {
        exact += a[static_cast<std::size_t>(i) * static_cast<std::size_t>(k) + static_cast<std::size_t>(p)] *
                 b[static_cast<std::size_t>(j) * static_cast<std::size_t>(k) + static_cast<std::size_t>(p)];
      }
      const double error = approx(i, j) - exact;
      row_error += error * error;
      row_exact += exact * exact;
    }
    error_squares += row_error;
    exact_squares += row_exact;
    if (row_exact > 0) worst_row = std::max(worst_row, std::sqrt(row_error / row_exact));
  }
  return {exact_squares > 0 ? std::sqrt(error_squares / exact_squares) : 0, worst_row};
}

// The product of the dequantized operands (fp64 sums) against the product of the originals.
[[nodiscard]] inline product_error quantized_product_error(const std::vector<double>& a, const std::vector<double>& b,
                                                           const quantized_matrix& qa, const quantized_matrix& qb) {
  if (qa.cols != qb.cols || a.size() != qa.values.size() || b.size() != qb.values.size())
    throw std::invalid_argument("quantized_product_error: A (m x k) and B (n x k) with their quantized forms");
  return product_error_of(a, b, qa.rows, qb.rows, qa.cols, [&](int i, int j) {
    double approx = 0;
    for (int p = 0; p < qa.cols; ++p) approx += qa.dequantized(i, p) * qb.dequantized(j, p);
    return approx;
  });
}

}  // namespace aisp::ch19
