// What the bf16 attention pairs whose kernels round P to bf16 before P V share (labs/attention,
// ch18:sliding_window, ch18:varlen_prefill): the tolerance, with its reasoning, and the fp64
// reference's view of the q, k, v and o buffers.
#pragma once

#include <cmath>
#include <span>

#include "aisp/pair.hpp"

namespace aisp::labs_attention {

// Note [bf16 attention tolerance]: the inputs are bf16 values in [-1, 1), exact in the fp64 reference.
// (1) Scores: d products of bf16 values, exact in fp32, summed in fp32 in another order than
//     fp64: relative 1e-6, negligible after the softmax.
// (2) P in bf16: both variants round probabilities to bf16 (unit roundoff 2^-8) before P V, the
//     baseline its normalized P, the fused kernel exp2(s - m) before dividing by l. Against the
//     truth an output moves by at most 2^-8 sum_j p_j |v_j| <= 2^-8 = 3.9e-3; typically far less,
//     since the errors are independent (~2^-8 sqrt(sum p_j^2 v_j^2)), so only rows of few keys
//     (the first rows of a causal mask) come near it. atol 4e-3 covers that worst case against
//     fp64. Between two variants, which round different quantities, the bound doubles; the largest
//     difference seen at the benchmark size was 2.6e-3, in a causal pair (H100, 2026-11-27), when
//     an earlier atol of 2e-3 (from a mistaken 2^-9) failed 2 of 33.5 M elements. A simulation of
//     the two roundings on rows of 2-8 keys (scripts/simulate_attention_tolerance.py) agrees: 31 of 153,600
//     elements fail at 2e-3, none of 2,048,000 at 4e-3 (2026-11-27).
// (3) The bf16 output: 2^-8 relative against fp64; at the benchmark size each variant is compared
//     with the baseline's bf16 output, where two roundings can differ by one ulp (2^-7 = 7.8e-3):
//     rtol 1e-2, as labs/gemm. rel-L2 stays the dtype default (1e-2): a skipped tile or a wrong
//     mask moves many elements and fails it whatever the atol.
// (4) exp2f and __expf: ~2 ulp of fp32, negligible.
[[nodiscard]] inline tolerance attention_tolerance() {
  return tolerance{.rtol = 1e-2,
                   .atol = 4e-3,
                   .max_rel_l2 = 1e-2,
                   .reason = "bf16 output: one ulp (2^-7) between two variants' roundings -> rtol 1e-2; P rounded to bf16 "
                             "(unit roundoff 2^-8) before P V moves an output by <= 2^-8 sum p|v| <= 3.9e-3 -> atol 4e-3 "
                             "(Note [bf16 attention tolerance] in labs/attention/attention_pair_parts.hpp)"};
}

// The reference's fp64 q, k, v and o, and the score scale 1 / sqrt(d).
struct attention_io {
  explicit attention_io(reference_io& io)
      : q(io.input("q")), k(io.input("k")), v(io.input("v")), o(io.output("o")),
        scale(1.0 / std::sqrt(static_cast<double>(io.param("d")))) {}
  std::span<const double> q, k, v;
  std::span<double> o;
  double scale;
};

}  // namespace aisp::labs_attention
