// The fp64 reference of one attention row, for the pairs' reference functions (labs/attention,
// ch18): out = sum_j softmax_j(scale q . k_j) v_j over `keys` keys, where key_row(j) and
// value_row(j) give key j's K and V rows (so paged and grouped layouts share it). Host-only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace aisp {

template <class KeyRow, class ValueRow>
void attention_row_reference(const double* query, std::size_t keys, std::size_t dim, double scale, KeyRow key_row,
                             ValueRow value_row, std::vector<double>& weights, double* out) {
  weights.resize(keys);
  double largest = -std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < keys; ++j) {
    const double* key = key_row(j);
    double dot = 0.0;
    for (std::size_t c = 0; c < dim; ++c) dot += query[c] * key[c];
    weights[j] = dot * scale;
    largest = std::max(largest, weights[j]);
  }
  double total = 0.0;
  for (std::size_t j = 0; j < keys; ++j) total += (weights[j] = std::exp(weights[j] - largest));
  std::fill(out, out + dim, 0.0);
  for (std::size_t j = 0; j < keys; ++j) {
    const double* value = value_row(j);
    const double weight = weights[j] / total;
    for (std::size_t c = 0; c < dim; ++c) out[c] += weight * value[c];
  }
}

}  // namespace aisp
