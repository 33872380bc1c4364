// elementwise_fusion: y = gelu(x * scale + bias), x (rows, cols) fp32, scale and bias per column.
// Baseline: three launches (scale, add bias, GELU), the two intermediates round-tripping HBM.
// Optimized: one launch that reads x once and writes y once.
// Why faster: every kernel here is already at the bandwidth roofline (float4 loads, 4 in flight),
// so time is bytes / 3.0 TB/s. x -> scaled -> shifted -> y is 3 reads + 3 writes of 4n
// bytes = 24n. Fused: 8n. At n = 2^26 that is 1.5 GiB vs 512 MiB: ~540 us vs ~180 us, ~3x.
// H100: see README.
// Run: aisp bench run --targets ch09:elementwise_fusion
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"

namespace aisp::ch09 {
namespace {

// Workload: x (rows, cols) fp32 row-major; scale (cols,), bias (cols,) fp32; y (rows, cols) fp32.
// GELU is the exact (erf) form, PyTorch's default: gelu(t) = 0.5 t (1 + erf(t / sqrt 2)).
// Napkin math: the fewest bytes are x read once and y written once, 8n (+ 8 cols for the
// parameters, which stay in L1/L2). n = 8192 x 8192 = 2^26: 512 MiB, ~180 us at 3.0 TB/s.
// FLOPs: 3 per element (multiply, add, activation); 0.375 FLOP/byte, far below the ridge.
//
// Note [column of a flat index]: the kernels walk the matrix as one flat array of float4s, so any
// cols works (rows of odd length are not 16-byte aligned; the flat array is). The column of
// element e is e % cols: one 32-bit remainder per float4, and the next three elements are the
// next columns unless the row ends inside the vector (then one remainder each, rarely taken).
// 32-bit indices: the launcher requires n < 2^31.
//
// Note [elementwise tolerance]: the fused kernel computes t = fmaf(x, scale, bias), one rounding;
// the baseline rounds x * scale, stores it, then adds bias. Near t = 0 (x * scale ~ -bias) that
// first rounding, up to half an ulp of |x * scale| < 1 (3e-8), is large relative to t, and gelu
// passes it through with slope ~0.5: up to ~2e-8 absolute error where the output is ~0, where a
// relative tolerance allows nothing. atol = 1e-7 covers it with a 5x margin. Elsewhere the error
// is a few ulps: erff is within 2 ulps (1.2e-7 absolute near |erf| ~ 1). The worst case is 1 + erf
// for t near -2 (|t| < 2 here: |x scale| < 1, |bias| < 1), where 1 + erf = 0.046 and those ulps
// become ~3e-6 relative, within the fp32 default rtol 1e-5.

constexpr std::uint32_t block_threads = 256;
constexpr std::uint32_t vectors_per_thread = 4;  // 64 bytes of loads in flight per thread
constexpr std::uint32_t vectors_per_block = vectors_per_thread * block_threads;

enum class stage : std::uint8_t { scale, bias, gelu, fused };

// Exact GELU, the form PyTorch uses. erff is within 2 ulps; see Note [elementwise tolerance].
[[nodiscard]] __device__ float gelu(float value) {
  constexpr float inv_sqrt2 = 0.70710678118654752f;
  return 0.5f * value * (1.0f + erff(value * inv_sqrt2));
}

template <stage Stage>
[[nodiscard]] __device__ float map_element(float value, const float* __restrict__ scale,
                                           const float* __restrict__ bias, std::uint32_t col) {
  if constexpr (Stage == stage::scale) {
    return value * __ldg(scale + col);
  } else if constexpr (Stage == stage::bias) {
    return value + __ldg(bias + col);
  } else if constexpr (Stage == stage::gelu) {
    return gelu(value);
  } else {
    return gelu(fmaf(value, __ldg(scale + col), __ldg(bias + col)));
  }
}

// The 4 elements starting at flat index `first` (see Note [column of a flat index]).
template <stage Stage>
[[nodiscard]] __device__ float4 map_vector(float4 value, std::uint32_t first,
                                           const float* __restrict__ scale,
                                           const float* __restrict__ bias, std::uint32_t cols) {
  constexpr bool needs_column = Stage != stage::gelu;
  std::uint32_t col[4] = {0, 0, 0, 0};
  if constexpr (needs_column) {
    const std::uint32_t col0 = first % cols;
#pragma unroll
    for (std::uint32_t j = 0; j < 4; ++j) {
      col[j] = col0 + j < cols ? col0 + j : (first + j) % cols;
    }
  }
  return make_float4(map_element<Stage>(value.x, scale, bias, col[0]),
                     map_element<Stage>(value.y, scale, bias, col[1]),
                     map_element<Stage>(value.z, scale, bias, col[2]),
                     map_element<Stage>(value.w, scale, bias, col[3]));
}

// One tile of vectors_per_thread x 256 float4s (16 KB) per block, all loads issued before the
// first store; the last block also takes the n % 4 tail, one element per thread.
template <stage Stage>
__global__ void elementwise_vec4_kernel(const float* __restrict__ input,
                                        float* __restrict__ output,
                                        const float* __restrict__ scale,
                                        const float* __restrict__ bias,
                                        std::uint32_t num_elements, std::uint32_t cols) {
  const std::uint32_t num_vectors = num_elements / 4;
  const std::uint32_t first = blockIdx.x * vectors_per_block + threadIdx.x;
  const auto* input4 = reinterpret_cast<const float4*>(input);  // 16-byte aligned: see launcher
  auto* output4 = reinterpret_cast<float4*>(output);

  float4 loaded[vectors_per_thread];
#pragma unroll
  for (std::uint32_t k = 0; k < vectors_per_thread; ++k) {
    const std::uint32_t v = first + k * block_threads;
    if (v < num_vectors) {
      loaded[k] = input4[v];
    }
  }
#pragma unroll
  for (std::uint32_t k = 0; k < vectors_per_thread; ++k) {
    const std::uint32_t v = first + k * block_threads;
    if (v < num_vectors) {
      output4[v] = map_vector<Stage>(loaded[k], 4 * v, scale, bias, cols);
    }
  }
  const std::uint32_t tail = num_vectors * 4 + threadIdx.x;
  if (blockIdx.x == gridDim.x - 1 && tail < num_elements) {
    output[tail] = map_element<Stage>(input[tail], scale, bias, tail % cols);
  }
}

template <stage Stage>
void launch_stage(run_context& ctx, const float* input, float* output) {
  const std::int64_t num_elements = ctx.param("rows") * ctx.param("cols");
  AISP_EXPECTS(num_elements < (std::int64_t{1} << 31), "32-bit flat indices need n < 2^31");
  AISP_EXPECTS(reinterpret_cast<std::uintptr_t>(input) % alignof(float4) == 0 &&
                   reinterpret_cast<std::uintptr_t>(output) % alignof(float4) == 0,
               "float4 accesses need 16-byte aligned buffers");
  const std::int64_t blocks = std::max<std::int64_t>(
      1, (num_elements / 4 + vectors_per_block - 1) / vectors_per_block);
  elementwise_vec4_kernel<Stage><<<static_cast<unsigned int>(blocks), block_threads, 0,
                                   ctx.stream()>>>(
      input, output, ctx.as<const float>("scale"), ctx.as<const float>("bias"),
      static_cast<std::uint32_t>(num_elements), static_cast<std::uint32_t>(ctx.param("cols")));
  AISP_CHECK_LAUNCH();
}

// ---- Baseline: one kernel per operation ----
// What an eager framework runs: mul, add, gelu, each a bandwidth-bound kernel with its own
// output in HBM. `scaled` and `shifted` are harness-owned scratch buffers of n floats.
void launch_baseline(run_context& ctx) {
  auto* scaled = ctx.as<float>("scaled");
  auto* shifted = ctx.as<float>("shifted");
  launch_stage<stage::scale>(ctx, ctx.as<const float>("x"), scaled);
  launch_stage<stage::bias>(ctx, scaled, shifted);
  launch_stage<stage::gelu>(ctx, shifted, ctx.as<float>("y"));
}

// ---- Optimized: one fused kernel ----
// Changed: the three operations run in registers between one load of x and one store of y; the
// intermediates never leave the SM. Same loop, same launch shape as each baseline kernel.
void launch_optimized(run_context& ctx) {
  launch_stage<stage::fused>(ctx, ctx.as<const float>("x"), ctx.as<float>("y"));
}

[[nodiscard]] std::int64_t matrix_elements(const workload& w) {
  return w.get("rows") * w.get("cols");
}
[[nodiscard]] std::int64_t column_count(const workload& w) { return w.get("cols"); }

}  // namespace
}  // namespace aisp::ch09

AISP_REGISTER(
    aisp::pair("ch09:elementwise_fusion")
        .summary("y = gelu(x * scale + bias): three bandwidth-bound kernels vs one fused kernel")
        .benchmark_size({{"rows", 8192}, {"cols", 8192}})
        .validation_size({{"rows", 1}, {"cols", 1}})
        .validation_size({{"rows", 7}, {"cols", 3}})
        .validation_size({{"rows", 65}, {"cols", 33}})
        .validation_size({{"rows", 301}, {"cols", 1003}})
        .held_out_size({{"rows", 1001}, {"cols", 769}})
        .input("x", aisp::dtype::f32, aisp::ch09::matrix_elements)
        .input("scale", aisp::dtype::f32, aisp::ch09::column_count)
        .input("bias", aisp::dtype::f32, aisp::ch09::column_count)
        .output("y", aisp::dtype::f32, aisp::ch09::matrix_elements)
        .scratch("scaled", aisp::dtype::f32, aisp::ch09::matrix_elements)
        .scratch("shifted", aisp::dtype::f32, aisp::ch09::matrix_elements)
        .work([](const aisp::workload& w) {
          const double elements = static_cast<double>(w.get("rows") * w.get("cols"));
          const double cols = static_cast<double>(w.get("cols"));
          return aisp::work_amount{.bytes = 8.0 * elements + 8.0 * cols, .flops = 3.0 * elements};
        })
        .reference([](aisp::reference_io& io) {
          const auto rows = static_cast<std::size_t>(io.param("rows"));
          const auto cols = static_cast<std::size_t>(io.param("cols"));
          const std::span<const double> x = io.input("x");
          const std::span<const double> scale = io.input("scale");
          const std::span<const double> bias = io.input("bias");
          const std::span<double> y = io.output("y");
          for (std::size_t r = 0; r < rows; ++r) {
            for (std::size_t c = 0; c < cols; ++c) {
              const double t = x[r * cols + c] * scale[c] + bias[c];
              y[r * cols + c] = 0.5 * t * std::erfc(-t / std::sqrt(2.0));  // t * Phi(t)
            }
          }
        })
        .tolerance_override(aisp::tolerance{
            .rtol = 1e-5,
            .atol = 1e-7,
            .max_rel_l2 = 1e-5,
            .reason = "the baseline rounds x * scale before adding bias; where t = x * scale + "
                      "bias ~ 0 that rounding (<= 3e-8) is all of the error and gelu passes "
                      "half of it: atol 1e-7 (see Note [elementwise tolerance])"})
        .tag("fusion")
        .tag("elementwise")
        .add_variant("baseline",
                     "three float4 kernels (scale, add bias, GELU), two n-float intermediates "
                     "through HBM",
                     aisp::ch09::launch_baseline)
        .add_variant("optimized", "one fused float4 kernel: read x once, write y once",
                     aisp::ch09::launch_optimized));
