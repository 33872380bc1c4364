// ilp_accumulators: squared L2 norm on [-1, 1] of n degree-127 polynomials (128 fp32 coefficients
// each), by the midpoint rule: e_i = (2 / 128) sum_m P_i(t_m)^2 over 128 nodes t_m.
// Baseline: one thread per polynomial, its 128 coefficients in registers, each P_i(t_m) by
// Horner's rule: one accumulator, a chain of 127 dependent FMAs.
// Optimized: second-order Horner with 4 accumulators: P(t) = P0(u) + t P1(u) + t^2 P2(u) +
// t^3 P3(u) with u = t^4 and P_r holding coefficients c_(4k+r); the 4 chains of 31 FMAs are
// independent and interleave.
// Why faster: 128 coefficients per thread cost ~140 registers, so one 256-thread block fits per
// SM: 2 warps per sub-partition. A dependent FMA issues ~4 cycles after its predecessor, so 2
// single-chain warps keep the FMA pipe busy at most half the time; 4 chains per warp fill it.
// Compute-bound (32 KFLOP per 512-byte polynomial): ~1.6x. H100: see README.
// Run: aisp bench run --targets ch06:ilp_accumulators
#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"

namespace aisp::ch06 {
namespace {

// Workload: coefficients (n, 128) fp32 row-major, c_i0 (constant term) first; energy (n,) fp32.
// Nodes t_m = (2m + 1) / 128 - 1, m = 0..127 (exact in fp32).
// Napkin math: bytes = 512 n + 4 n; FLOPs = 128 nodes x (127 FMAs + 1 FMA for the square) x 2
// = 32,768 per polynomial: 63 FLOP/byte, ~3x the ~22 FLOP/byte ridge. n = 2^18: 8.6 GFLOP;
// at the FP32 FMA peak (528 sub-partitions x 32 lanes x ~1.8 GHz = 30 T FMA/s) ~140 us.
// Baseline, chain-bound: 2 warps per sub-partition, one FMA per 4 cycles each: ~50% of the
// peak, ~280 us. Both variants also wait, once per block, for the block's 128 KB of coefficients
// (one block per SM leaves nothing to overlap it with): ~25-50 us of the total in each, so the
// expected speedup is ~1.6x rather than 2x. Memory (128 MiB) alone would be ~45 us.
//
// Note [occupancy]: the coefficients are reused by all 128 nodes, so they stay in registers:
// ptxas reports 139 (baseline) and 142 (optimized) registers per thread, so a 256-thread block
// needs ~36 K of the SM's 64 K registers and one block (8 warps) fits per SM: 2 warps per
// sub-partition. The registers are
// genuinely needed (capping them would spill the coefficients), so the latency has to be hidden
// inside each warp (ILP) rather than by more warps (TLP, as in ch06:launch_bounds).
//
// Note [fma latency]: a sub-partition issues one warp instruction per cycle, and an FFMA that
// needs the previous FFMA's result can issue ~4 cycles after it. One Horner chain per warp and 2
// warps give <= 2 FFMAs per 4 cycles. With 4 chains per warp, 8 independent FFMAs per 4 cycles
// are ready: the FMA pipe, not latency, is the limit. Cost of the split per node: u = t^4 (2
// FMULs) and 3 FMAs to combine, against 3 fewer FMAs in the chains: 130 vs 128 instructions.
//
// Note [horner tolerance]: both variants evaluate P in fp32 with a different association than
// each other and than the fp64 reference (which uses the power form). Horner's error is at most
// ~2^-24 sum_k |b_k| |t|^k (b_k the partial sums); with random coefficients in [-1, 1) the
// partial sums are ~sqrt(k / 3) in size and the roundings independent, giving ~1e-6 relative in
// P at the outer nodes and less inside. The split adds the rounding of u = t^4 (2 ulps). The
// energy is a sum of 128 squares (all >= 0, no cancellation), so its relative error is ~2x that
// of a typical P plus <= 128 x 2^-24 from the sum: ~1e-6 (measured max 1e-6 over 2049
// polynomials). The default fp32 tolerance (rtol 1e-5, rel-L2 1e-5) holds with ~10x margin, and
// a wrong coefficient or node moves e by > 1e-3 relative.

constexpr int num_coefficients = 128;  // degree 127
constexpr int num_nodes = 128;
constexpr int coefficient_vectors = num_coefficients / 4;  // float4 loads per polynomial
constexpr int chains = 4;                                  // optimized accumulators
constexpr unsigned int block_threads = 256;
static_assert(num_coefficients % chains == 0);

[[nodiscard]] unsigned int polynomial_blocks(std::int64_t num_polynomials) {
  const std::int64_t blocks = (num_polynomials + block_threads - 1) / block_threads;
  AISP_EXPECTS(blocks <= 0x7fffffff, "n exceeds the gridDim.x limit");
  return static_cast<unsigned int>(blocks);
}

// Node m of the midpoint rule on [-1, 1]: (2m + 1 - 128) / 128, exact in fp32.
[[nodiscard]] __device__ __forceinline__ float node(int m) {
  return static_cast<float>(2 * m + 1 - num_nodes) * (1.0f / num_nodes);
}

// The polynomial's 128 coefficients into registers (32 float4 loads).
__device__ __forceinline__ void load_coefficients(const float4* __restrict__ row,
                                                  float (&c)[num_coefficients]) {
#pragma unroll
  for (int v = 0; v < coefficient_vectors; ++v) {
    const float4 q = row[v];
    c[4 * v] = q.x;
    c[4 * v + 1] = q.y;
    c[4 * v + 2] = q.z;
    c[4 * v + 3] = q.w;
  }
}

// ---- Baseline: Horner's rule, one accumulator ----
[[nodiscard]] __device__ __forceinline__ float horner(const float (&c)[num_coefficients],
                                                      float t) {
  float acc = c[num_coefficients - 1];
#pragma unroll
  for (int k = num_coefficients - 2; k >= 0; --k) {
    acc = fmaf(acc, t, c[k]);  // waits for the previous FMA: a 127-long chain
  }
  return acc;
}

// ---- Optimized: second-order Horner, 4 independent accumulators ----
// Changed: accumulator r runs Horner in u = t^4 over c_r, c_(r+4), c_(r+8), ...; the 4 chains
// share no result, so a warp has 4 FFMAs ready per step instead of 1. They are combined at the
// end with 3 FMAs in t.
[[nodiscard]] __device__ __forceinline__ float horner_4_chains(
    const float (&c)[num_coefficients], float t) {
  const float t2 = t * t;
  const float u = t2 * t2;
  float acc[chains];
#pragma unroll
  for (int r = 0; r < chains; ++r) {
    acc[r] = c[num_coefficients - chains + r];
  }
#pragma unroll
  for (int k = num_coefficients / chains - 2; k >= 0; --k) {
#pragma unroll
    for (int r = 0; r < chains; ++r) {
      acc[r] = fmaf(acc[r], u, c[chains * k + r]);
    }
  }
  return fmaf(fmaf(fmaf(acc[3], t, acc[2]), t, acc[1]), t, acc[0]);
}

// Both variants: per polynomial, the sum of p(x_m)^2 over the nodes; only the evaluator differs.
template <float (*Evaluate)(const float (&)[num_coefficients], float)>
__global__ void poly_norm_kernel(const float4* __restrict__ coefficients, float* __restrict__ energy,
                                 std::int64_t num_polynomials) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= num_polynomials) {
    return;
  }
  float c[num_coefficients];
  load_coefficients(coefficients + i * coefficient_vectors, c);
  float total = 0.0f;
  for (int m = 0; m < num_nodes; ++m) {
    const float p = Evaluate(c, node(m));
    total = fmaf(p, p, total);
  }
  energy[i] = total * (2.0f / num_nodes);
}

template <float (*Evaluate)(const float (&)[num_coefficients], float)>
void launch_poly_norm(run_context& ctx) {
  const std::int64_t num_polynomials = ctx.param("n");
  poly_norm_kernel<Evaluate><<<polynomial_blocks(num_polynomials), block_threads, 0, ctx.stream()>>>(
      ctx.as<const float4>("coefficients"), ctx.as<float>("energy"), num_polynomials);
  AISP_CHECK_LAUNCH();
}

}  // namespace
}  // namespace aisp::ch06

AISP_REGISTER(
    aisp::pair("ch06:ilp_accumulators")
        .summary("L2 norm of degree-127 polynomials at 128 nodes, 8 warps/SM: Horner (one FMA "
                 "chain) vs second-order Horner with 4 independent accumulators")
        .benchmark_size({{"n", std::int64_t{1} << 18}})
        .validation_size({{"n", 1}})
        .validation_size({{"n", 7}})
        .validation_size({{"n", 65}})
        .validation_size({{"n", 300}})
        .held_out_size({{"n", 2049}})
        .input("coefficients", aisp::dtype::f32,
               [](const aisp::workload& w) {
                 return w.get("n") * aisp::ch06::num_coefficients;
               })
        .output("energy", aisp::dtype::f32, [](const aisp::workload& w) { return w.get("n"); })
        .work([](const aisp::workload& w) {
          const double polynomials = static_cast<double>(w.get("n"));
          return aisp::work_amount{
              .bytes = 4.0 * polynomials * (aisp::ch06::num_coefficients + 1),
              .flops = polynomials * aisp::ch06::num_nodes * 2.0 * aisp::ch06::num_coefficients};
        })
        .reference([](aisp::reference_io& io) {
          constexpr std::size_t degree_plus_one = aisp::ch06::num_coefficients;
          constexpr int nodes = aisp::ch06::num_nodes;
          const std::span<const double> coefficients = io.input("coefficients");
          const std::span<double> energy = io.output("energy");
          for (std::size_t i = 0; i < energy.size(); ++i) {
            double total = 0.0;
            for (int m = 0; m < nodes; ++m) {
              const double t = (2.0 * m + 1.0) / nodes - 1.0;
              double value = 0.0;
              double power = 1.0;
              for (std::size_t k = 0; k < degree_plus_one; ++k) {  // power form, not Horner
                value += coefficients[i * degree_plus_one + k] * power;
                power *= t;
              }
              total += value * value;
            }
            energy[i] = total * 2.0 / nodes;
          }
        })
        .tag("ilp")
        .add_variant("baseline", "Horner's rule: one accumulator, a 127-long dependent FMA chain",
                     aisp::ch06::launch_poly_norm<aisp::ch06::horner>)
        .add_variant("optimized",
                     "second-order Horner: 4 independent accumulators in t^4, combined at the end",
                     aisp::ch06::launch_poly_norm<aisp::ch06::horner_4_chains>));
