// gemv_fp8_weights: weight-only quantization for decode. The MLP up-projection of ch16:gemv_28672
// (28672 x 8192) with per-channel scales, y[r] = scale[r] sum_i w[r, i] x[i]: the weights held in
// bf16 (the baseline) or in fp8 e4m3 (the optimized; Note [derived inputs]: the harness keeps the
// fp8 copy equal to the bf16 weights rounded to e4m3), x and y bf16, fp32 accumulation.
// Baseline: ch16:gemv's optimized kernel on the bf16 weights, the scale in its epilogue.
// Optimized: a warp a row reading 16 fp8 weights a 16-byte chunk, widened in registers: half the
// weight bytes; persistent warps with a ring of 8 chunk loads a lane (Note [persistent rows] in
// gemv_kernels.cuh), since the short fp8 rows left ch16:gemv's kernel at 81% of the copy ceiling.
// optimized_unrolled: ch16:gemv's kernel (a block of 8 rows a launch unit, 4 chunks a lane
// unrolled) on the fp8 weights; optimized_ring16: a ring of 16 (a whole 8 KB row a warp in
// flight), 2 blocks an SM: the same bytes in flight as the ring of 8, half the warps.
// Why faster: the GEMV is a stream of weight bytes; halving them halves the time if the kernel
// keeps the same bytes in flight.
// Tolerance: Note [fp8 weight tolerance]. H100: see README.
// Run: aisp bench run --targets ch16:gemv_fp8_weights
#include <cuda_fp8.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "gemv_kernels.cuh"

namespace aisp::ch16 {
namespace {

// Workload: w (rows, k) bf16 with its fp8 copy, scale (rows,) fp32 in [0, 1), x (k) and y (rows)
// bf16. The fewest bytes the job needs: the fp8 weights are inputs, so 1 byte a weight, 224 MiB
// (~78 us at 3.0 TB/s); the bf16 baseline streams twice that.
//
// Note [per-channel scales]: a quantized checkpoint stores each output channel as a scale times
// a row of values in the element type's range; here the rows are uniform in [-1, 1) (inside
// e4m3's range, 448) and the scales uniform in [0, 1). Both variants apply the scale in the
// epilogue (rows multiplies), so they differ only in the weights' element type.
//
// Note [fp8 weight tolerance]: e4m3 keeps 3 mantissa bits, 2^-4 relative a weight (below 2^-6 it
// flushes to zero). Simulated in fp64 (uniform weights, x and scales, 16-200 rows a k): the
// largest output error was 0.026 at k = 1, 0.13 at k = 33, 0.92 at k = 4096 and 1.37 at
// k = 8192 (it grows as sqrt(k), like the outputs, |y| ~ 11 there); the relative L2 error of y
// stayed 2.9-5.8% at every k. Hence atol 3 (twice the worst, for the benchmark size), rtol 0.1,
// and rel-L2 8e-2: the check that separates a right fp8 answer from a wrong one at every size.
const tolerance fp8_weight_tolerance{
    .rtol = 0.1,
    .atol = 3.0,
    .max_rel_l2 = 8e-2,
    .reason = "weights in fp8 e4m3 (2^-4 relative): simulated output errors up to 1.37 at k = 8192 (|y| ~ 11), "
              "rel-L2 2.9-5.8% at k = 1..8192 (Note [fp8 weight tolerance])"};

[[nodiscard]] gemv_args args_of(run_context& ctx, const char* weights) {
  AISP_EXPECTS(ctx.param("k") <= 0x7fffffff, "k must fit a 32-bit index");
  gemv_args a;
  a.w = ctx.buffer(weights);
  a.scale = ctx.as<const float>("scale");
  a.x = ctx.as<const __nv_bfloat16>("x");
  a.y = ctx.as<__nv_bfloat16>("y");
  a.rows = ctx.param("rows");
  a.k = static_cast<int>(ctx.param("k"));
  return a;
}

// ---- Baseline: bf16 weights, ch16:gemv's optimized kernel ----
void launch_baseline(run_context& ctx) { launch_gemv_chunked<__nv_bfloat16>(args_of(ctx, "w"), ctx.stream()); }

// ---- optimized_unrolled: fp8 e4m3 weights, 16 a 16-byte chunk ----
// Changed: the kernel reads the fp8 copy; a lane's chunk is 16 weights (and two 16-byte loads of
// x), widened to fp32 in registers.
void launch_unrolled(run_context& ctx) { launch_gemv_chunked<__nv_fp8_e4m3>(args_of(ctx, "w_fp8"), ctx.stream()); }

// ---- Optimized: persistent warps, a ring of 8 chunk loads a lane ----
// Changed: one resident wave of blocks, each warp walking rows; a lane refills each consumed
// ring slot at once, into the next row past the current one (Note [persistent rows]).
void launch_optimized(run_context& ctx) {
  launch_gemv_ring<__nv_fp8_e4m3, 8, 4>(args_of(ctx, "w_fp8"), ctx.stream());
}

// ---- optimized_ring16: a ring of 16 chunk loads a lane ----
// Changed: twice the ring (128 registers), half the resident warps. A ring of 4 at the unrolled
// kernel's 32 registers (8 blocks an SM) spills; rings must divide a lane's 16 chunks a row.
void launch_ring16(run_context& ctx) {
  launch_gemv_ring<__nv_fp8_e4m3, 16, 2>(args_of(ctx, "w_fp8"), ctx.stream());
}

void scaled_gemv_reference(reference_io& io) {
  const auto rows = static_cast<std::size_t>(io.param("rows"));
  const auto k = static_cast<std::size_t>(io.param("k"));
  const std::span<const double> w = io.input("w");
  const std::span<const double> scale = io.input("scale");
  const std::span<const double> x = io.input("x");
  const std::span<double> y = io.output("y");
  for (std::size_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (std::size_t i = 0; i < k; ++i) sum += w[r * k + i] * x[i];
    y[r] = scale[r] * sum;
  }
}

// The fp8 variants: the same precision contract, Note [fp8 weight tolerance].
[[nodiscard]] variant fp8_variant(std::string name, std::string summary, stage_fn run) {
  variant v;
  v.name = std::move(name);
  v.summary = std::move(summary);
  v.run = run;
  v.precision = "weights read from an fp8 e4m3 copy of the bf16 weights; fp32 accumulate";
  v.precision_tolerance = fp8_weight_tolerance;
  return v;
}

[[nodiscard]] pair fp8_weights_pair() {
  return pair("ch16:gemv_fp8_weights")
      .summary("decode GEMV with per-channel scales, W 28672 x 8192: bf16 weights vs fp8 e4m3 weights")
      .benchmark_size({{"rows", 28672}, {"k", 8192}})
      .validation_size({{"rows", 1}, {"k", 1}})
      .validation_size({{"rows", 7}, {"k", 3}})
      .validation_size({{"rows", 65}, {"k", 33}})
      .validation_size({{"rows", 33}, {"k", 1024}})
      .validation_size({{"rows", 9}, {"k", 8208}})  // 513 fp8 chunks: a lane with one more
      .validation_size({{"rows", 1000}, {"k", 16}})  // one fp8 chunk a row
      .validation_size({{"rows", 5003}, {"k", 4096}})  // the rings: whole steps (8); warps (4224 on 132 SMs) past their first row
      .held_out_size({{"rows", 301}, {"k", 2064}})
      .input("w", dtype::bf16, {"rows", "k"})
      .derived_input("w_fp8", dtype::e4m3, "w")
      .input("scale", dtype::f32, {"rows"}, init_distribution::uniform_unit)
      .input("x", dtype::bf16, {"k"})
      .output("y", dtype::bf16, {"rows"})
      .work([](const workload& w) {
        const double weights = static_cast<double>(w.get("rows") * w.get("k"));
        const auto rows = static_cast<double>(w.get("rows"));
        return work_amount{.bytes = weights + 2.0 * static_cast<double>(w.get("k")) + 6.0 * rows,
                           .flops = 2.0 * weights + rows};
      })
      .reference(scaled_gemv_reference)
      .tolerance_override(gemv_tolerance)
      .tag("inference")
      .tag("decode")
      .tag("fp8")
      .tag("quantization")
      .add_variant("baseline", "ch16:gemv's optimized kernel on the bf16 weights, the scale in the epilogue",
                   launch_baseline)
      .add_variant(fp8_variant("optimized_unrolled",
                               "ch16:gemv's warp-a-row kernel on fp8 e4m3 weights: 16 a 16-byte chunk, half the bytes",
                               launch_unrolled))
      .add_variant(fp8_variant("optimized",
                               "persistent warps over rows, a ring of 8 fp8 chunk loads a lane refilled across rows",
                               launch_optimized))
      .add_variant(fp8_variant("optimized_ring16", "the persistent ring at 16 chunk loads a lane, 2 blocks an SM",
                               launch_ring16));
}

}  // namespace
}  // namespace aisp::ch16

AISP_REGISTER(aisp::ch16::fp8_weights_pair());
