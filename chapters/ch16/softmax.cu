// softmax: y = softmax(x) over each row of a bf16 (rows, cols) matrix, fp32 math, bf16 out: the
// attention-score and logits softmax of inference. Two pairs, the shapes PyTorch was measured on:
// ch16:softmax_4096 (32768 rows of 4096) and ch16:softmax_32768 (4096 rows of 32768).
// Baseline: three passes, three kernels (row max; row sum of exp(x - max); normalize), as an
// eager framework chains them: x crosses HBM three times, y once.
// Optimized: one kernel, one row a block (128 threads for 4096, 512 for 32768), the row in
// registers (Note [row in registers]); the max and the sum of exponentials come out of one pass
// with an online rescale; x crosses HBM once. The row in a cluster of 8 CTAs of 128 threads
// (Note [cluster rows]) was measured for softmax_32768 too: 252 us against 189 us (71% against
// 95% of the copy ceiling, H100 GPU-6a533c4a, 2026-11-27); removed.
// Why faster: bandwidth-bound; 4 x 2n bytes against 2 x 2n: ideally 2x.
// H100: see README. Run: aisp bench run --targets ch16:softmax_4096 ch16:softmax_32768
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "row_kernels.cuh"

namespace aisp::ch16 {
namespace {

// Workload: x, y (rows, cols) bf16 row-major. The fewest bytes: x read once, y written once,
// 4 rows cols: 512 MiB at either shape, ~179 us at the 3.0 TB/s copy ceiling. FLOPs: ~5 an
// element (max, subtract, exp, add, multiply), 1.25 FLOP/byte: bandwidth-bound.
// Tolerance: the bf16 default. Each output is exp(x - max) / sum in fp32 (__expf: ~2 ulp of fp32)
// rounded once to bf16 (2^-9 relative), far inside rtol 1.6e-2; the scratch row statistics of the
// baseline are fp32.

// ---- Baseline: three kernels (max, sum of exponentials, normalize) ----
// Each is a competent row kernel: one row a block, 16-byte loads where the rows allow.
// What costs is that the row is read from HBM in each of the three (it does not stay in L2:
// 256 MiB of x against 50 MB).
template <int RowThreads, int N>
__global__ void row_max_kernel(const __nv_bfloat16* __restrict__ x, float* __restrict__ row_max, std::int64_t rows,
                               int cols) {
  const std::int64_t r = blockIdx.x;
  const auto* row = reinterpret_cast<const bf16_vec<N>*>(x + r * cols);
  float largest = -INFINITY;
  for (int i = static_cast<int>(threadIdx.x); i < cols / N; i += RowThreads) {
    const bf16_vec<N> v = row[i];
#pragma unroll
    for (int e = 0; e < N; ++e) largest = fmaxf(largest, to_float(v, e));
  }
  largest = block::reduce<RowThreads>(largest, max_op{});
  if (static_cast<int>(threadIdx.x) == 0) row_max[r] = largest;
}

template <int RowThreads, int N>
__global__ void row_exp_sum_kernel(const __nv_bfloat16* __restrict__ x, const float* __restrict__ row_max,
                                   float* __restrict__ row_sum, std::int64_t rows, int cols) {
  const std::int64_t r = blockIdx.x;
  const auto* row = reinterpret_cast<const bf16_vec<N>*>(x + r * cols);
  const float largest = row_max[r];
  float sum = 0.0f;
  for (int i = static_cast<int>(threadIdx.x); i < cols / N; i += RowThreads) {
    const bf16_vec<N> v = row[i];
#pragma unroll
    for (int e = 0; e < N; ++e) sum += __expf(to_float(v, e) - largest);
  }
  sum = block::reduce<RowThreads>(sum, sum_op{});
  if (static_cast<int>(threadIdx.x) == 0) row_sum[r] = sum;
}

template <int RowThreads, int N>
__global__ void normalize_kernel(const __nv_bfloat16* __restrict__ x, const float* __restrict__ row_max,
                                 const float* __restrict__ row_sum, __nv_bfloat16* __restrict__ y, std::int64_t rows,
                                 int cols) {
  const std::int64_t r = blockIdx.x;
  const auto* row = reinterpret_cast<const bf16_vec<N>*>(x + r * cols);
  auto* out = reinterpret_cast<bf16_vec<N>*>(y + r * cols);
  const float largest = row_max[r];
  const float inverse_sum = 1.0f / row_sum[r];
  for (int i = static_cast<int>(threadIdx.x); i < cols / N; i += RowThreads) {
    const bf16_vec<N> v = row[i];
    bf16_vec<N> result;
#pragma unroll
    for (int e = 0; e < N; ++e) result.value[e] = __float2bfloat16_rn(__expf(to_float(v, e) - largest) * inverse_sum);
    out[i] = result;
  }
}

template <class Group, int N>
void launch_three_passes(run_context& ctx) {
  static_assert(Group::ctas == 1, "the three-pass kernels are one block a row");
  constexpr int threads = Group::cta_threads;
  const std::int64_t rows = ctx.param("rows");
  const int cols = static_cast<int>(ctx.param("cols"));
  const auto* x = ctx.as<const __nv_bfloat16>("x");
  auto* row_max = ctx.as<float>("row_max");
  auto* row_sum = ctx.as<float>("row_sum");
  row_max_kernel<threads, N><<<static_cast<unsigned>(rows), threads, 0, ctx.stream()>>>(x, row_max, rows, cols);
  AISP_CHECK_LAUNCH();
  row_exp_sum_kernel<threads, N><<<static_cast<unsigned>(rows), threads, 0, ctx.stream()>>>(x, row_max, row_sum, rows, cols);
  AISP_CHECK_LAUNCH();
  normalize_kernel<threads, N>
      <<<static_cast<unsigned>(rows), threads, 0, ctx.stream()>>>(x, row_max, row_sum, ctx.as<__nv_bfloat16>("y"), rows, cols);
  AISP_CHECK_LAUNCH();
}

template <class Group, int N>
struct three_passes {
  static void run(run_context& ctx) { launch_three_passes<Group, N>(ctx); }
};

void launch_baseline(run_context& ctx) {
  check_row_shape(ctx);
  dispatch_rows<three_passes>(ctx, {"x", "y"});
}

// ---- Optimized: one pass over HBM, the row in registers, online max and sum ----
// Changed: one kernel; each thread loads its part of the row into registers at once (4 vectors a
// thread for 4096 values, 8 for 32768: all loads in flight), keeps a running (max, sum of
// exp(x - max)) over them, rescaling the sum once per 8-value vector when the max grows, and the
// row group merges the threads' pairs; the normalize pass reads the registers, not HBM.
template <class Group, int N>
__global__ void __launch_bounds__(Group::cta_threads, Group::ctas_per_sm)
    softmax_online_kernel(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int cols) {
  constexpr int vecs = cached_vectors<Group, N>;
  const std::int64_t r = Group::row();
  const auto* row = reinterpret_cast<const bf16_vec<N>*>(x + r * cols);
  const int num_vectors = cols / N;
  bf16_vec<N> cached[vecs];
  const auto load = [&](int i) { return row[i]; };
  load_row<Group>(num_vectors, cached, load);

  float running_max = -INFINITY;
  float running_sum = 0.0f;
  for_each_vector<Group>(num_vectors, cached, load, [&](int, const bf16_vec<N>& v) {
    float vector_max = to_float(v, 0);
#pragma unroll
    for (int e = 1; e < N; ++e) vector_max = fmaxf(vector_max, to_float(v, e));
    const float new_max = fmaxf(running_max, vector_max);
    float sum = running_sum * __expf(running_max - new_max);  // exp(-inf) = 0 on the first vector
#pragma unroll
    for (int e = 0; e < N; ++e) sum += __expf(to_float(v, e) - new_max);
    running_max = new_max;
    running_sum = sum;
  });
  const float row_max = row::reduce<Group, 0>(running_max, max_op{});
  // A thread with no vector (a row shorter than its group) holds (-inf, 0): it adds 0.
  const float own = running_max == -INFINITY ? 0.0f : running_sum * __expf(running_max - row_max);
  const float inverse_sum = 1.0f / row::reduce<Group, 1>(own, sum_op{});
  row::arrive_after_last_read<Group>();

  auto* out = reinterpret_cast<bf16_vec<N>*>(y + r * cols);
  for_each_vector<Group>(num_vectors, cached, load, [&](int i, const bf16_vec<N>& v) {
    bf16_vec<N> result;
#pragma unroll
    for (int e = 0; e < N; ++e) result.value[e] = __float2bfloat16_rn(__expf(to_float(v, e) - row_max) * inverse_sum);
    out[i] = result;
  });
  row::wait_before_exit<Group>();
}

template <class Group, int N>
struct one_pass {
  static void run(run_context& ctx) {
    launch_rows<Group>(softmax_online_kernel<Group, N>, ctx.param("rows"), ctx.stream(), ctx.as<const __nv_bfloat16>("x"),
                       ctx.as<__nv_bfloat16>("y"), static_cast<int>(ctx.param("cols")));
  }
};

void launch_optimized(run_context& ctx) {
  check_row_shape(ctx);
  dispatch_rows<one_pass>(ctx, {"x", "y"});
}

void softmax_reference(reference_io& io) {
  const auto rows = static_cast<std::size_t>(io.param("rows"));
  const auto cols = static_cast<std::size_t>(io.param("cols"));
  const std::span<const double> x = io.input("x");
  const std::span<double> y = io.output("y");
  for (std::size_t r = 0; r < rows; ++r) {
    const double* row = x.data() + r * cols;
    double largest = row[0];
    for (std::size_t c = 1; c < cols; ++c) largest = std::max(largest, row[c]);
    double sum = 0.0;
    for (std::size_t c = 0; c < cols; ++c) sum += std::exp(row[c] - largest);
    for (std::size_t c = 0; c < cols; ++c) y[r * cols + c] = std::exp(row[c] - largest) / sum;
  }
}

[[nodiscard]] pair softmax_pair(std::int64_t rows, std::int64_t cols) {
  const auto per_row = [](const workload& w) { return w.get("rows"); };
  pair declared = pair("ch16:softmax_" + std::to_string(cols))
      .summary("row softmax of a bf16 " + std::to_string(rows) + " x " + std::to_string(cols) +
               " matrix: three kernels (max, sum, normalize) vs one pass with the row in registers")
      .benchmark_size({{"rows", rows}, {"cols", cols}})
      .validation_size({{"rows", 1}, {"cols", 1}})
      .validation_size({{"rows", 7}, {"cols", 3}})
      .validation_size({{"rows", 65}, {"cols", 33}})
      .validation_size({{"rows", 9}, {"cols", 4096}})    // a warp's row, exactly
      .validation_size({{"rows", 3}, {"cols", 4103}})    // just past it: a block, scalar loads
      .validation_size({{"rows", 2}, {"cols", 32768}})   // a block's row, exactly
      .validation_size({{"rows", 2}, {"cols", 40000}})   // past the registers: overflow from L2
      .held_out_size({{"rows", 301}, {"cols", 5000}})
      .input("x", dtype::bf16, {"rows", "cols"})
      .output("y", dtype::bf16, {"rows", "cols"})
      .scratch("row_max", dtype::f32, per_row)
      .scratch("row_sum", dtype::f32, per_row)
      .work([](const workload& w) {
        const double elements = static_cast<double>(w.get("rows") * w.get("cols"));
        return work_amount{.bytes = 4.0 * elements, .flops = 5.0 * elements};
      })
      .reference(softmax_reference)
      .tag("inference")
      .tag("reduction")
      .add_variant("baseline", "three row kernels: max, sum of exp(x - max), normalize; x read from HBM three times",
                   launch_baseline)
      .add_variant("optimized",
                   "one kernel, the row in registers (a block of 128 threads for 4096, 512 for 32768), online max and "
                   "sum: x read once",
                   launch_optimized);
  return declared;
}

}  // namespace
}  // namespace aisp::ch16

AISP_REGISTER(aisp::ch16::softmax_pair(32768, 4096));
AISP_REGISTER(aisp::ch16::softmax_pair(4096, 32768));
