// residual_norm: the pre-norm step of a transformer block in bf16, h = x + residual (the next
// residual stream, stored), y = norm(h) * weight (+ bias), with norm = LayerNorm (mean and
// variance) or RMSNorm (root mean square). Four pairs: ch16:layer_norm_4096 / _32768 and
// ch16:rms_norm_4096 / _32768 (32768 rows of 4096, 4096 rows of 32768).
// Baseline: a residual-add kernel writes h, then a norm kernel (row in registers) reads it back.
// Optimized: one kernel adds, stores h, reduces and normalizes from registers; on long rows one
// block an SM walks the rows with the next row's loads in flight (Note [pipelined long rows]).
// Long rows also run the fused kernel a block a row (optimized_row_a_block) and a row a cluster
// of 8 CTAs (optimized_cluster, Note [cluster rows] in row_kernels.cuh).
// Why faster: bandwidth-bound; the baseline moves 5 x 2n bytes (read x and residual, write h,
// read h, write y), the fused kernel 4 x 2n: ideally 1.25x. A row a block leaves an SM without
// loads in flight while it reduces and stores: pipelining the rows keeps HBM busy.
// H100: see README. Run: aisp bench run --targets ch16:layer_norm_4096 ch16:rms_norm_4096 ...
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "aisp/async_copy.cuh"
#include "aisp/launch_shape.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "row_kernels.cuh"

namespace aisp::ch16 {
namespace {

// Workload: x, residual, h, y (rows, cols) bf16 row-major; weight (and bias) (cols,) bf16.
// The fewest bytes: x and residual read once, h and y written once: 8 rows cols (+ the weights,
// which stay in L2): 1 GiB at either shape, ~358 us at 3.0 TB/s.
//
// Note [the residual stream is bf16]: h is stored in bf16 and the norm of the next layer reads
// what was stored, so the specification (and the fp64 reference) normalizes h rounded to bf16;
// both variants form h = bf16(x + residual) in fp32 and normalize that. Tolerance: the bf16
// default. Mean and variance are fp32 sums of at most 32768 terms (relative error ~1e-6), y is
// rounded once to bf16 (2^-9 relative) inside rtol 1.6e-2.
enum class norm_kind : std::uint8_t { layer, rms };
constexpr float layer_norm_eps = 1e-5f;  // PyTorch's LayerNorm default
constexpr float rms_norm_eps = 1e-6f;    // Llama's RMSNorm

template <norm_kind Kind>
constexpr float eps_of = Kind == norm_kind::layer ? layer_norm_eps : rms_norm_eps;

template <int N>
[[nodiscard]] __device__ bf16_vec<N> residual_sum(const bf16_vec<N>& x, const bf16_vec<N>& residual) {
  bf16_vec<N> h;
#pragma unroll
  for (int e = 0; e < N; ++e) h.value[e] = __float2bfloat16_rn(to_float(x, e) + to_float(residual, e));
  return h;
}

struct norm_params {
  const __nv_bfloat16* x = nullptr;  // h itself when the kernel does not add the residual
  const __nv_bfloat16* residual = nullptr;
  const __nv_bfloat16* weight = nullptr;
  const __nv_bfloat16* bias = nullptr;  // LayerNorm only
  __nv_bfloat16* h = nullptr;
  __nv_bfloat16* y = nullptr;
  std::int64_t rows = 0;
  int cols = 0;
};

// After a row's first vectors are cached (Note [row in registers]): stores h (AddResidual),
// reduces and normalizes row r; load_h(i) forms vector i again for the overflow of a long row;
// weight[i] and bias[i] (LayerNorm) are read in the last pass, from global or shared memory.
template <norm_kind Kind, class Group, int N, bool AddResidual, int Vecs, class LoadH>
__device__ void normalize_row(const norm_params& p, std::int64_t r, const bf16_vec<N> (&cached)[Vecs], LoadH load_h,
                              const bf16_vec<N>* weight, const bf16_vec<N>* bias) {
  const std::int64_t offset = r * p.cols;
  auto* h_out = reinterpret_cast<bf16_vec<N>*>(p.h + offset);
  const int num_vectors = p.cols / N;
  // The overflow of a long row (Note [row in registers]) is formed again, bit-identical, in each
  // pass; h is stored once, in this first pass, whose stores drain while the row group reduces.
  float sum = 0.0f;
  for_each_vector<Group>(num_vectors, cached, load_h, [&](int i, const bf16_vec<N>& h) {
    if constexpr (AddResidual) h_out[i] = h;
#pragma unroll
    for (int e = 0; e < N; ++e) {
      const float v = to_float(h, e);
      sum += Kind == norm_kind::layer ? v : v * v;
    }
  });
  const float inverse_cols = 1.0f / static_cast<float>(p.cols);
  float mean = 0.0f;
  float mean_square = 0.0f;
  if constexpr (Kind == norm_kind::layer) {
    mean = row::reduce<Group, 0>(sum, sum_op{}) * inverse_cols;
    float squares = 0.0f;  // about the mean: no cancellation, unlike E[h^2] - mean^2
    for_each_vector<Group>(num_vectors, cached, load_h, [&](int, const bf16_vec<N>& h) {
#pragma unroll
      for (int e = 0; e < N; ++e) {
        const float centered = to_float(h, e) - mean;
        squares += centered * centered;
      }
    });
    mean_square = row::reduce<Group, 1>(squares, sum_op{}) * inverse_cols;
  } else {
    mean_square = row::reduce<Group, 0>(sum, sum_op{}) * inverse_cols;
  }
  row::arrive_after_last_read<Group>();
  const float inverse_rms = rsqrtf(mean_square + eps_of<Kind>);

  auto* y = reinterpret_cast<bf16_vec<N>*>(p.y + offset);
  for_each_vector<Group>(num_vectors, cached, load_h, [&](int i, const bf16_vec<N>& h) {
    // The clobber keeps each vector's weight (and bias) load in its own step of this pass rather
    // than hoisted above the reductions beside the cached row. It was added while chasing spills
    // that came from another layout (Note [fused long rows]); the kernels measured have it, and
    // it changes their code, so it stays. The weights hit L1 and L2 either way.
    asm volatile("" ::: "memory");
    const bf16_vec<N> w = weight[i];
    bf16_vec<N> out;
    if constexpr (Kind == norm_kind::layer) {
      const bf16_vec<N> b = bias[i];
#pragma unroll
      for (int e = 0; e < N; ++e) {
        out.value[e] = __float2bfloat16_rn(fmaf((to_float(h, e) - mean) * inverse_rms, to_float(w, e), to_float(b, e)));
      }
    } else {
#pragma unroll
      for (int e = 0; e < N; ++e) out.value[e] = __float2bfloat16_rn(to_float(h, e) * inverse_rms * to_float(w, e));
    }
    y[i] = out;
  });
  row::wait_before_exit<Group>();
}

// Forms vector i of row r's h: bf16(x + residual) (AddResidual), or h itself read back.
template <int N, bool AddResidual>
struct h_loader {
  const bf16_vec<N>* x;
  const bf16_vec<N>* residual;
  __device__ h_loader(const norm_params& p, std::int64_t r)
      : x(reinterpret_cast<const bf16_vec<N>*>(p.x + r * p.cols)),
        residual(reinterpret_cast<const bf16_vec<N>*>(p.residual + r * p.cols)) {}
  [[nodiscard]] __device__ bf16_vec<N> operator()(int i) const {
    if constexpr (AddResidual) {
      return residual_sum(x[i], residual[i]);
    } else {
      return x[i];
    }
  }
};

// One row a row group (Note [row in registers]). AddResidual: read x and residual, store
// h = bf16(x + residual); otherwise read h as x (the baseline's second kernel).
template <norm_kind Kind, class Group, int N, bool AddResidual>
__global__ void __launch_bounds__(Group::cta_threads, Group::ctas_per_sm) residual_norm_kernel(norm_params p) {
  const std::int64_t r = Group::row();
  const h_loader<N, AddResidual> load_h(p, r);
  bf16_vec<N> cached[cached_vectors<Group, N>];
  load_row<Group>(p.cols / N, cached, load_h);
  normalize_row<Kind, Group, N, AddResidual>(p, r, cached, load_h, reinterpret_cast<const bf16_vec<N>*>(p.weight),
                                             reinterpret_cast<const bf16_vec<N>*>(p.bias));
}

// Note [pipelined long rows]: the fused kernel's 1024-thread block holds one row an SM, so while
// it reduces and stores, its SM has no loads in flight (87-89% of the copy ceiling on an H100,
// 75% on an H200, 2026-12-02). Here one block an SM walks rows r, r + grid, ... and starts its
// next row's loads as soon as the current row is in registers, so they overlap this row's
// reductions and its stores: the next row's x (and, for RMSNorm, its residual) lands in shared
// memory by bulk copies (TMA) on an mbarrier; LayerNorm's residual is asked of the L2
// (cp.async.bulk.prefetch.L2) and read from global memory, because its weight and bias take the
// rest of shared memory: a thread's columns are the same in every row, so the weight (and bias)
// are copied in once and read from shared memory, not 64 KB (128 KB) from the L2 every row.
// Tried first (H200 GPU-fa7871ca, 2026-12-02): x and residual staged, weights from the L2: RMSNorm
// 81% -> 88% of the copy ceiling, LayerNorm 75% -> 76%; both rows prefetched into the L2 only:
// 79% and 75%. With the weights in shared memory (GPU-1c8c764d): LayerNorm 84%, RMSNorm 88%.
// The arithmetic is normalize_row's: the same bits as `optimized_row_a_block`. For rows that fit
// the registers of wide_rows and take 16-byte vectors; the others run the fused kernel.
template <norm_kind Kind>
constexpr bool stages_residual = Kind == norm_kind::rms;
template <norm_kind Kind>
constexpr int affine_arrays = Kind == norm_kind::layer ? 2 : 1;

// Shared memory a row of `cols` takes: the weights, x and (RMSNorm) the residual.
template <norm_kind Kind>
[[nodiscard]] constexpr int pipelined_shared_bytes(int cols) {
  return (affine_arrays<Kind> + 1 + (stages_residual<Kind> ? 1 : 0)) * cols * static_cast<int>(sizeof(__nv_bfloat16));
}

template <norm_kind Kind>
__global__ void __launch_bounds__(wide_rows::cta_threads, 1) pipelined_norm_kernel(norm_params p) {
  using Group = wide_rows;
  constexpr int N = 8;
  extern __shared__ __align__(128) unsigned char shared_bytes[];
  __shared__ std::uint64_t weights_landed;
  __shared__ std::uint64_t row_landed;
  const unsigned row_bytes = static_cast<unsigned>(p.cols) * sizeof(__nv_bfloat16);
  unsigned char* x_shared = shared_bytes + affine_arrays<Kind> * row_bytes;
  unsigned char* residual_shared = x_shared + row_bytes;  // RMSNorm only
  const auto* weight_shared = reinterpret_cast<const bf16_vec<N>*>(shared_bytes);
  const auto* bias_shared = reinterpret_cast<const bf16_vec<N>*>(shared_bytes + row_bytes);  // LayerNorm only
  const auto fetch = [&](std::int64_t r) {  // thread 0
    const __nv_bfloat16* residual = p.residual + r * p.cols;
    ptx::mbarrier_arrive_expect_tx(&row_landed, (stages_residual<Kind> ? 2 : 1) * row_bytes);
    ptx::bulk_copy_to_shared(x_shared, p.x + r * p.cols, row_bytes, &row_landed);
    if constexpr (stages_residual<Kind>) {
      ptx::bulk_copy_to_shared(residual_shared, residual, row_bytes, &row_landed);
    } else {
      ptx::bulk_prefetch_l2(residual, row_bytes);
    }
  };
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&weights_landed, 1);
    ptx::mbarrier_init(&row_landed, 1);
    ptx::fence_mbarrier_init();
    ptx::mbarrier_arrive_expect_tx(&weights_landed, affine_arrays<Kind> * row_bytes);
    ptx::bulk_copy_to_shared(shared_bytes, p.weight, row_bytes, &weights_landed);
    if constexpr (Kind == norm_kind::layer) ptx::bulk_copy_to_shared(shared_bytes + row_bytes, p.bias, row_bytes, &weights_landed);
    fetch(blockIdx.x);  // the grid is at most the rows
  }
  __syncthreads();
  ptx::mbarrier_wait_parity(&weights_landed, 0);
  const auto* x_staged = reinterpret_cast<const bf16_vec<N>*>(x_shared);
  const auto* residual_staged = reinterpret_cast<const bf16_vec<N>*>(residual_shared);
  unsigned parity = 0;
  for (std::int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
    const h_loader<N, true> load_h(p, r);
    bf16_vec<N> cached[Group::vectors];
    ptx::mbarrier_wait_parity(&row_landed, parity);
    parity ^= 1;
    load_row<Group>(p.cols / N, cached, [&](int i) {
      return residual_sum(x_staged[i], stages_residual<Kind> ? residual_staged[i] : load_h.residual[i]);
    });
    __syncthreads();  // every thread has read the staged row before the next one overwrites it
    if (threadIdx.x == 0 && r + gridDim.x < p.rows) fetch(r + gridDim.x);
    normalize_row<Kind, Group, N, true>(p, r, cached, load_h, weight_shared, bias_shared);
  }
}

constexpr int pipelined_max_cols = wide_rows::threads * wide_rows::vectors * 8;  // 32768: the registers' row

[[nodiscard]] bool rows_fit_pipeline(const run_context& ctx, norm_kind kind) {
  const bool vectors = kind == norm_kind::layer
                           ? rows_take_16_byte_vectors(ctx, {"x", "residual", "weight", "bias", "h", "y"})
                           : rows_take_16_byte_vectors(ctx, {"x", "residual", "weight", "h", "y"});
  return vectors && ctx.param("cols") > short_row_limit && ctx.param("cols") <= pipelined_max_cols;
}

[[nodiscard]] norm_params params_of(run_context& ctx, norm_kind kind) {
  norm_params p;
  p.x = ctx.as<const __nv_bfloat16>("x");
  p.residual = ctx.as<const __nv_bfloat16>("residual");
  p.weight = ctx.as<const __nv_bfloat16>("weight");
  p.bias = kind == norm_kind::layer ? ctx.as<const __nv_bfloat16>("bias") : nullptr;
  p.h = ctx.as<__nv_bfloat16>("h");
  p.y = ctx.as<__nv_bfloat16>("y");
  p.rows = ctx.param("rows");
  p.cols = static_cast<int>(ctx.param("cols"));
  return p;
}

template <norm_kind Kind, bool AddResidual>
struct norm_launcher {
  template <class Group, int N>
  struct at {
    static void run(run_context& ctx) {
      norm_params p = params_of(ctx, Kind);
      if constexpr (!AddResidual) p.x = p.h;  // the baseline's norm kernel reads h back
      launch_rows<Group>(residual_norm_kernel<Kind, Group, N, AddResidual>, p.rows, ctx.stream(), p);
    }
  };
};

// Note [fused long rows]: the fused kernel loads x and the residual (two vectors a cached one).
// With 8 cached vectors a thread of a 512-thread block it took 97 registers (spilling at the 64 of
// two blocks an SM), and one such block an SM measured 0.84-0.89x of the unfused chain on an H200
// (2026-11-27); 1024 threads of 4 cached vectors, one block an SM, reached 87-89% of the copy
// ceiling on an H100 (GPU-5b444d43, 2026-11-27). A cluster of 8 CTAs of 128 threads a row (Note
// [cluster rows]: the 4096-value kernel's shape, 8 CTAs an SM) measured lower on the next H100
// (GPU-6a533c4a: 82% and 85% against 94% and 96% for the 4096-value rows in the same run), and
// 4 CTAs of 256 the same: the fused long rows keep 1024 threads (wide_rows); the cluster stays as
// the optimized_cluster step. The baseline's norm kernel is the 512-thread, two-blocks-an-SM
// kernel (long_rows): the unfused chain at its best.
template <norm_kind Kind, bool AddResidual, class LongGroup = std::conditional_t<AddResidual, wide_rows, long_rows>>
void launch_norm(run_context& ctx) {
  if constexpr (Kind == norm_kind::layer) {
    dispatch_rows<norm_launcher<Kind, AddResidual>::template at, LongGroup>(ctx, {"x", "residual", "weight", "bias", "h", "y"});
  } else {
    dispatch_rows<norm_launcher<Kind, AddResidual>::template at, LongGroup>(ctx, {"x", "residual", "weight", "h", "y"});
  }
}

// ---- Baseline: a residual-add kernel, then the norm kernel reading h back ----
// The add is a flat grid-stride kernel with 16-byte accesses (one resident wave), at the
// bandwidth roofline on its own; what costs is h written to HBM and read back by the next kernel.
constexpr int add_block_threads = 256;

template <int N>
__global__ void residual_add_kernel(const bf16_vec<N>* __restrict__ x, const bf16_vec<N>* __restrict__ residual,
                                    bf16_vec<N>* __restrict__ h, std::int64_t num_vectors) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < num_vectors; i += stride) {
    h[i] = residual_sum(x[i], residual[i]);
  }
}

template <norm_kind Kind>
void launch_baseline(run_context& ctx) {
  check_row_shape(ctx);
  norm_params p = params_of(ctx, Kind);
  const std::int64_t num_elements = p.rows * p.cols;
  if (rows_take_16_byte_vectors(ctx, {"x", "residual", "h"})) {
    residual_add_kernel<8><<<wave_grid(num_elements / 8, add_block_threads), add_block_threads, 0, ctx.stream()>>>(
        reinterpret_cast<const bf16_vec<8>*>(p.x), reinterpret_cast<const bf16_vec<8>*>(p.residual),
        reinterpret_cast<bf16_vec<8>*>(p.h), num_elements / 8);
  } else {
    residual_add_kernel<1><<<wave_grid(num_elements, add_block_threads), add_block_threads, 0, ctx.stream()>>>(
        reinterpret_cast<const bf16_vec<1>*>(p.x), reinterpret_cast<const bf16_vec<1>*>(p.residual),
        reinterpret_cast<bf16_vec<1>*>(p.h), num_elements);
  }
  AISP_CHECK_LAUNCH();
  launch_norm<Kind, false>(ctx);
}

// ---- Fused: add, store h, reduce and normalize in one kernel, a row a row group ----
// Changed: the norm kernel reads x and residual instead of h and forms h in registers; it still
// writes h (the next residual stream) but never reads it back: 2 x 2n bytes fewer, one launch.
// `optimized` on short rows; `optimized_row_a_block` on long ones, where `optimized` pipelines.
template <norm_kind Kind>
void launch_fused(run_context& ctx) {
  check_row_shape(ctx);
  launch_norm<Kind, true>(ctx);
}

// ---- optimized_cluster (long rows only): the fused kernel, a row in a cluster of 8 CTAs ----
// Changed: 8 CTAs of 128 threads a row, reductions through distributed shared memory, 8 CTAs an
// SM instead of one 1024-thread block (Note [fused long rows]: measured slower).
template <norm_kind Kind>
void launch_cluster(run_context& ctx) {
  check_row_shape(ctx);
  launch_norm<Kind, true, cluster_rows>(ctx);
}

// ---- Optimized: the fused kernel, pipelined over the rows on long rows ----
// Changed from `optimized_row_a_block` (long rows, Note [pipelined long rows]): one block an SM
// walks the rows, reads the weights from shared memory, and starts its next row's loads before it
// reduces and stores this one. Short, ragged or over-long rows run the fused kernel.
template <norm_kind Kind>
void launch_optimized(run_context& ctx) {
  if (!rows_fit_pipeline(ctx, Kind)) {
    launch_fused<Kind>(ctx);
    return;
  }
  check_row_shape(ctx);
  const norm_params p = params_of(ctx, Kind);
  const auto grid = static_cast<unsigned>(std::min<std::int64_t>(p.rows, device_sm_count()));
  pipelined_norm_kernel<Kind><<<grid, wide_rows::cta_threads, pipelined_shared_bytes<Kind>(p.cols), ctx.stream()>>>(p);
  AISP_CHECK_LAUNCH();
}

// setup(): the pipelined kernel's shared-memory opt-in (past the 48 KB default), not in a timed call.
template <norm_kind Kind>
void prepare_optimized(run_context& /*ctx*/) {
  AISP_CUDA_CHECK(cudaFuncSetAttribute(pipelined_norm_kernel<Kind>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       pipelined_shared_bytes<Kind>(pipelined_max_cols)));
}

[[nodiscard]] double bf16_round(double value) {
  return static_cast<double>(__bfloat162float(__float2bfloat16_rn(static_cast<float>(value))));
}

template <norm_kind Kind>
void norm_reference(reference_io& io) {
  const auto rows = static_cast<std::size_t>(io.param("rows"));
  const auto cols = static_cast<std::size_t>(io.param("cols"));
  const std::span<const double> x = io.input("x");
  const std::span<const double> residual = io.input("residual");
  const std::span<const double> weight = io.input("weight");
  const std::span<double> h = io.output("h");
  const std::span<double> y = io.output("y");
  for (std::size_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    double sum_squares = 0.0;
    for (std::size_t c = 0; c < cols; ++c) {
      const std::size_t i = r * cols + c;
      h[i] = bf16_round(x[i] + residual[i]);  // Note [the residual stream is bf16]
      sum += h[i];
      sum_squares += h[i] * h[i];
    }
    const double mean = Kind == norm_kind::layer ? sum / static_cast<double>(cols) : 0.0;
    double spread = 0.0;
    for (std::size_t c = 0; c < cols; ++c) spread += (h[r * cols + c] - mean) * (h[r * cols + c] - mean);
    const double variance = (Kind == norm_kind::layer ? spread : sum_squares) / static_cast<double>(cols);
    const double inverse = 1.0 / std::sqrt(variance + static_cast<double>(eps_of<Kind>));
    for (std::size_t c = 0; c < cols; ++c) {
      const std::size_t i = r * cols + c;
      y[i] = (h[i] - mean) * inverse * weight[c] + (Kind == norm_kind::layer ? io.input("bias")[c] : 0.0);
    }
  }
}

template <norm_kind Kind>
[[nodiscard]] pair norm_pair(std::int64_t rows, std::int64_t cols) {
  const bool layer = Kind == norm_kind::layer;
  const std::string name = layer ? "layer_norm" : "rms_norm";
  const auto per_col = [](const workload& w) { return w.get("cols"); };
  pair declared = pair("ch16:" + name + "_" + std::to_string(cols));
  declared
      .summary("h = x + residual, y = " + name + "(h) in bf16, " + std::to_string(rows) + " x " + std::to_string(cols) +
               ": add kernel + norm kernel vs one fused kernel")
      .benchmark_size({{"rows", rows}, {"cols", cols}})
      .validation_size({{"rows", 1}, {"cols", 1}})
      .validation_size({{"rows", 7}, {"cols", 3}})
      .validation_size({{"rows", 65}, {"cols", 33}})
      .validation_size({{"rows", 9}, {"cols", 4096}})
      .validation_size({{"rows", 3}, {"cols", 4103}})
      .validation_size({{"rows", 2}, {"cols", 32768}})
      .validation_size({{"rows", 2}, {"cols", 40000}})  // past the registers: overflow from L2
      .validation_size({{"rows", 300}, {"cols", 8200}})  // the pipelined kernel: rows past one a block
      .held_out_size({{"rows", 301}, {"cols", 5000}})
      .input("x", dtype::bf16, {"rows", "cols"})
      .input("residual", dtype::bf16, {"rows", "cols"})
      .input("weight", dtype::bf16, per_col);
  if (layer) declared.input("bias", dtype::bf16, per_col);
  declared.output("h", dtype::bf16, {"rows", "cols"})
      .output("y", dtype::bf16, {"rows", "cols"})
      .work([layer](const workload& w) {
        const double elements = static_cast<double>(w.get("rows") * w.get("cols"));
        const double params = (layer ? 4.0 : 2.0) * static_cast<double>(w.get("cols"));
        return work_amount{.bytes = 8.0 * elements + params, .flops = (layer ? 8.0 : 5.0) * elements};
      })
      .reference(norm_reference<Kind>)
      .tag("inference")
      .tag("fusion")
      .tag("reduction")
      .add_variant("baseline",
                   "16-byte residual-add kernel writes h, then a row-in-registers " + name +
                       " kernel reads it back (5 x 2n bytes)",
                   launch_baseline<Kind>)
      .add_variant(kit::with_state("optimized",
                                   cols > short_row_limit
                                       ? "the fused kernel (add, store h, reduce, normalize: 4 x 2n bytes), one 1024-thread "
                                         "block an SM walking the rows with the weights in shared memory: the next row's "
                                         "loads (TMA) in flight while this row reduces and stores"
                                       : "one row-in-registers kernel: add, store h, reduce, normalize (4 x 2n bytes)",
                                   launch_optimized<Kind>, prepare_optimized<Kind>, {}));
  if (cols > short_row_limit) {
    declared.add_variant("optimized_row_a_block",
                         "one row-in-registers kernel, a 1024-thread block a row: add, store h, reduce, normalize (4 x 2n "
                         "bytes)",
                         launch_fused<Kind>);
    declared.add_variant("optimized_cluster",
                         "the fused kernel on a cluster of 8 CTAs of 128 threads a row, reductions through "
                         "distributed shared memory",
                         launch_cluster<Kind>);
  }
  return declared;
}

}  // namespace
}  // namespace aisp::ch16

AISP_REGISTER(aisp::ch16::norm_pair<aisp::ch16::norm_kind::layer>(32768, 4096));
AISP_REGISTER(aisp::ch16::norm_pair<aisp::ch16::norm_kind::layer>(4096, 32768));
AISP_REGISTER(aisp::ch16::norm_pair<aisp::ch16::norm_kind::rms>(32768, 4096));
AISP_REGISTER(aisp::ch16::norm_pair<aisp::ch16::norm_kind::rms>(4096, 32768));
