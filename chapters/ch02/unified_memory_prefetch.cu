// unified_memory_prefetch: output[i] = input[i] * weight[i], the weights in a managed buffer whose
// pages start every call in host memory.
// Baseline: the kernel reads the managed weights directly; each first touch of a page faults and
// the driver migrates it on demand.
// Optimized: cudaMemPrefetchAsync moves the weights to the GPU in bulk, chunk by chunk on a copy
// stream, and the kernel of chunk k starts as soon as chunk k has landed.
// Why faster: a GPU page fault stalls the warps that touch the page while the driver services a
// batch of faults; prefetch skips the fault path and streams 2 MiB blocks at ~49 GB/s. Measured
// on the lent H100, 256 MiB: fault-driven ~22.8 ms, prefetch ~5.5 ms. H100: see README.
// Run: aisp bench run --targets ch02:unified_memory_prefetch
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "aisp/check.hpp"
#include "aisp/launch_shape.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::ch02 {
namespace {

// Workload: input (n,) fp32 and output (n,) fp32 in device memory (the harness's); weights (n,)
// fp32 in a managed (unified) buffer made in setup. n = 2^26: 256 MiB each.
// Napkin math per call: both variants first push the weights' pages to the host (~16.6 ms for
// 256 MiB measured); then the GPU must bring 256 MiB back over PCIe: on demand (~22.8 ms measured)
// or prefetched (~5.5 ms at ~49 GB/s); the kernel itself (768 MiB through HBM) is ~0.3 ms.
// Baseline ~39.5 ms, optimized ~22.5 ms: ~1.7x. Two trial runs under aisp on the lent H100 gave
// 39.7 -> 23.7 ms (1.67x) and 54.6 -> 35.3 ms (1.54x): the host side of the migrations is noisy
// (the baseline against itself differed by up to 15%), the gain stays far above it.
//
// Note [declared bytes]: 8n. Every call moves the weights' 4n bytes to the host and 4n back, one
// after the other, so 8n cross PCIe in a serial round trip: the pair declares
// moves_data_over(pcie_one_direction), and its SOL % is against one direction's pinned bandwidth.
// (It happens to equal the harness's buffers' 8n, the input read and the output written; the
// kernel's 12n through HBM take ~0.3 ms of the ~22 ms, so HBM was never the bound. Until issue 17
// the pair was judged against HBM: 0.6% SOL, a number that meant nothing.)
//
// Note [weights are not inputs]: the weights are a fixed function of the index, w(i) = 0.5 +
// (i mod 97) / 64, written once by the host in setup (a model's constant table, say). They never
// depend on the harness's inputs, so setup may make them; the reference recomputes them in fp64
// with its own code. Every w(i) is a dyadic rational with a 7-bit numerator: the fp32 product with
// a small integer is exact, so the pair holds the bitwise exact-integer challenge.
//
// Note [host-resident every call]: the point is the cost of getting host-resident pages to the
// GPU, so every call starts by prefetching the weights to the host on ctx.stream() (both variants
// pay it; a CPU that just wrote the table would leave it there the same way). Without that, the
// first call migrates the pages and every later call finds them resident: both variants would
// then time the same 0.3 ms kernel.
//
// Note [prefetch pipeline]: the optimized variant prefetches in up to 16 chunks of whole 2 MiB
// blocks (the driver's migration unit for managed memory) on a copy stream, and the kernel of
// chunk k waits only for chunk k's event. The kernel of a chunk (~20 us) hides under the next
// chunk's migration (~340 us): a small gain over one bulk prefetch and one kernel (within noise
// on the probe), but the usual way to overlap migration with compute when the consumer can start
// on partial data. It also gives the audit 16 kernels per call: see the next note.
//
// Note [migration is invisible to the audit]: CUPTI's MEMCPY records do not include managed-
// memory migrations (prefetches or fault service); they are UNIFIED_MEMORY_COUNTER records, which
// the harness does not enable (checked on the probe: no MEMCPY record for two 256 MiB prefetches;
// under aisp the baseline showed 1 device operation per call). The device-idle check (L1) sees
// only the kernels: the optimized variant is ~1% busy by CUPTI's account and passes because it
// has more than 4 operations per call, not because the migration is seen.

constexpr int block_threads = 256;
constexpr int max_chunks = 16;
constexpr std::int64_t migration_block_elements = (std::int64_t{2} << 20) / sizeof(float);
// The managed buffer is kept small: managed memory that overcommits the card can hang it.
constexpr std::size_t max_weight_bytes = std::size_t{256} << 20;
constexpr std::size_t free_memory_margin = std::size_t{1} << 30;

// w(i) = 0.5 + (i mod 97) / 64: in [0.5, 2.0], never zero, exact in fp32 (Note [weights...]).
[[nodiscard]] float weight_at(std::int64_t i) {
  return 0.5f + static_cast<float>(i % 97) / 64.0f;
}

// The managed weights, written by the host in setup, freed in teardown.
class managed_weights {
 public:
  explicit managed_weights(std::int64_t num_elements) : num_elements_(num_elements) {
    const std::size_t bytes = byte_count();
    AISP_EXPECTS(bytes <= max_weight_bytes, "managed weights are capped at 256 MiB");
    int concurrent = 0;
    AISP_CUDA_CHECK(cudaGetDevice(&device_));
    AISP_CUDA_CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device_));
    AISP_EXPECTS(concurrent == 1, "the pair needs GPU page faults on managed memory");
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    AISP_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    AISP_EXPECTS(free_bytes >= bytes + free_memory_margin,
                 "not enough free device memory for the managed weights plus a 1 GiB margin");
    AISP_CUDA_CHECK(cudaMallocManaged(&weights_, bytes));
    for (std::int64_t i = 0; i < num_elements_; ++i) weights_[i] = weight_at(i);  // host first touch
  }
  ~managed_weights() { cudaFree(weights_); }
  managed_weights(const managed_weights&) = delete;
  managed_weights& operator=(const managed_weights&) = delete;

  [[nodiscard]] const float* data() const { return weights_; }
  [[nodiscard]] std::size_t byte_count() const {
    return static_cast<std::size_t>(num_elements_) * sizeof(float);
  }
  [[nodiscard]] int device() const { return device_; }

  // Note [host-resident every call]
  void push_to_host(cudaStream_t stream) const {
    const cudaMemLocation host{cudaMemLocationTypeHost, 0};
    AISP_CUDA_CHECK(cudaMemPrefetchAsync(weights_, byte_count(), host, 0, stream));
  }

 private:
  std::int64_t num_elements_;
  int device_ = 0;
  float* weights_ = nullptr;
};

// output[i] = input[i] * weights[i] over `count` elements; float4 body, scalar tail. Every chunk
// starts at a multiple of 4 elements, so the float4 casts stay 16-byte aligned.
__global__ void scale_by_weights_kernel(const float* __restrict__ input,
                                        const float* __restrict__ weights,
                                        float* __restrict__ output, std::int64_t count) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  const std::int64_t thread = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::int64_t num_vectors = count / 4;
  const auto* input4 = reinterpret_cast<const float4*>(input);
  const auto* weights4 = reinterpret_cast<const float4*>(weights);
  auto* output4 = reinterpret_cast<float4*>(output);
  for (std::int64_t v = thread; v < num_vectors; v += stride) {
    const float4 x = input4[v];
    const float4 w = weights4[v];
    output4[v] = make_float4(x.x * w.x, x.y * w.y, x.z * w.z, x.w * w.w);
  }
  const std::int64_t tail = num_vectors * 4 + thread;
  if (tail < count) output[tail] = input[tail] * weights[tail];
}

void launch_scale(const float* input, const float* weights, float* output, std::int64_t count,
                  cudaStream_t stream) {
  scale_by_weights_kernel<<<wave_grid((count + 3) / 4, block_threads), block_threads, 0, stream>>>(
      input, weights, output, count);
  AISP_CHECK_LAUNCH();
}

void check_alignment(const run_context& ctx) {
  for (const char* name : {"input", "output"}) {
    AISP_EXPECTS(reinterpret_cast<std::uintptr_t>(ctx.buffer(name)) % alignof(float4) == 0,
                 "float4 loads need 16-byte aligned buffers");
  }
}

// ---- Baseline: the kernel faults the weights in ----
void setup_baseline(run_context& ctx) { make_state<managed_weights>(ctx, ctx.param("n")); }
void teardown_baseline(run_context& ctx) { release_state<managed_weights>(ctx); }

void run_baseline(run_context& ctx) {
  const auto& weights = state_of<managed_weights>(ctx);
  check_alignment(ctx);
  weights.push_to_host(ctx.stream());
  launch_scale(ctx.as<const float>("input"), weights.data(), ctx.as<float>("output"),
               ctx.param("n"), ctx.stream());
}

// ---- Optimized: prefetch the weights in chunks, each chunk's kernel after its prefetch ----
// Changed: cudaMemPrefetchAsync to the GPU on a copy stream forked from ctx.stream(), one event
// per chunk; ctx.stream() waits chunk k's event, then runs the kernel on chunk k. The last wait is
// on the last prefetch, so the copy stream is joined back before run() returns.
class prefetch_state {
 public:
  explicit prefetch_state(std::int64_t num_elements) : weights_(num_elements), num_elements_(num_elements) {
    // Whole 2 MiB blocks per chunk when large, multiples of 4 elements always.
    const std::int64_t per_chunk = (num_elements + max_chunks - 1) / max_chunks;
    const std::int64_t granule = per_chunk >= migration_block_elements ? migration_block_elements : 4;
    chunk_elements_ = std::max<std::int64_t>((per_chunk + granule - 1) / granule * granule, 4);
    num_chunks_ = static_cast<int>((num_elements + chunk_elements_ - 1) / chunk_elements_);
    AISP_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
    AISP_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    chunk_ready_.resize(static_cast<std::size_t>(num_chunks_));
    for (cudaEvent_t& event : chunk_ready_) {
      AISP_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    }
  }
  ~prefetch_state() {
    for (cudaEvent_t event : chunk_ready_) cudaEventDestroy(event);
    cudaEventDestroy(fork_);
    cudaStreamDestroy(copy_stream_);
  }
  prefetch_state(const prefetch_state&) = delete;
  prefetch_state& operator=(const prefetch_state&) = delete;

  void run(const float* input, float* output, cudaStream_t main) {
    weights_.push_to_host(main);                    // Note [host-resident every call]
    AISP_CUDA_CHECK(cudaEventRecord(fork_, main));  // prefetches start after the host push
    AISP_CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, fork_));
    const cudaMemLocation gpu{cudaMemLocationTypeDevice, weights_.device()};
    for (int chunk = 0; chunk < num_chunks_; ++chunk) {
      const std::int64_t first = chunk * chunk_elements_;
      const std::int64_t count = std::min(chunk_elements_, num_elements_ - first);
      AISP_CUDA_CHECK(cudaMemPrefetchAsync(weights_.data() + first,
                                           static_cast<std::size_t>(count) * sizeof(float), gpu, 0,
                                           copy_stream_));
      AISP_CUDA_CHECK(cudaEventRecord(chunk_ready_[static_cast<std::size_t>(chunk)], copy_stream_));
    }
    for (int chunk = 0; chunk < num_chunks_; ++chunk) {
      const std::int64_t first = chunk * chunk_elements_;
      const std::int64_t count = std::min(chunk_elements_, num_elements_ - first);
      AISP_CUDA_CHECK(cudaStreamWaitEvent(main, chunk_ready_[static_cast<std::size_t>(chunk)]));
      launch_scale(input + first, weights_.data() + first, output + first, count, main);
    }
  }

 private:
  managed_weights weights_;
  std::int64_t num_elements_;
  std::int64_t chunk_elements_ = 0;
  int num_chunks_ = 0;
  cudaStream_t copy_stream_ = nullptr;
  cudaEvent_t fork_ = nullptr;
  std::vector<cudaEvent_t> chunk_ready_;  // sized in setup; run() never allocates
};

void setup_optimized(run_context& ctx) { make_state<prefetch_state>(ctx, ctx.param("n")); }
void teardown_optimized(run_context& ctx) { release_state<prefetch_state>(ctx); }

void run_optimized(run_context& ctx) {
  check_alignment(ctx);
  state_of<prefetch_state>(ctx).run(ctx.as<const float>("input"), ctx.as<float>("output"),
                                    ctx.stream());
}

[[nodiscard]] std::int64_t elements(const workload& w) { return w.get("n"); }

}  // namespace
}  // namespace aisp::ch02

AISP_REGISTER(
    aisp::pair("ch02:unified_memory_prefetch")
        .summary("scale by managed-memory weights that start on the host: on-demand page faults vs "
                 "chunked cudaMemPrefetchAsync")
        .benchmark_size({{"n", std::int64_t{1} << 26}})
        .validation_size({{"n", 1}})
        .validation_size({{"n", 7}})
        .validation_size({{"n", 65}})
        .validation_size({{"n", 1003}})
        .validation_size({{"n", 100003}})
        .held_out_size({{"n", 4194311}})  // 16 MiB, 16 chunks, odd tail
        .input("input", aisp::dtype::f32, aisp::ch02::elements)
        .output("output", aisp::dtype::f32, aisp::ch02::elements)
        .exact_math()  // small integers times dyadic weights: one exact fp32 product (X5)
        .moves_data_over(aisp::data_path::pcie_one_direction)  // the weights' round trip (Note [declared bytes])
        .work([](const aisp::workload& w) {
          // 4n to the host and 4n back per call (Note [declared bytes]).
          const double elements = static_cast<double>(w.get("n"));
          return aisp::work_amount{.bytes = 2.0 * 4.0 * elements, .flops = elements};
        })
        .reference([](aisp::reference_io& io) {
          const std::span<const double> input = io.input("input");
          const std::span<double> output = io.output("output");
          for (std::size_t i = 0; i < input.size(); ++i) {
            output[i] = input[i] * (0.5 + static_cast<double>(i % 97) / 64.0);
          }
        })
        .tag("unified-memory")
        .allow_managed_memory()  // the pair is about managed memory (C10)
        .add_variant(aisp::kit::with_state(
            "baseline", "weights read through managed memory: pages migrate on GPU faults",
            aisp::ch02::run_baseline, aisp::ch02::setup_baseline, aisp::ch02::teardown_baseline))
        .add_variant(aisp::kit::with_state(
            "optimized",
            "cudaMemPrefetchAsync to the GPU in 2 MiB-block chunks on a copy stream, each chunk's "
            "kernel after its event",
            aisp::ch02::run_optimized, aisp::ch02::setup_optimized,
            aisp::ch02::teardown_optimized)));
