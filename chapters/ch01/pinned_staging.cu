// pinned_staging: move an fp32 device buffer through host memory and back (D2H, then H2D).
// Baseline: the host staging buffer is ordinary pageable memory (allocated in setup()).
// Optimized: the staging buffer is page-locked (cudaMallocHost in setup()).
// Why faster: the copy engines DMA only from and to pinned pages. With a pageable buffer the
// driver copies every byte a second time on the CPU, through its own small pinned bounce buffer,
// and each copy waits for the CPU: ~9 GB/s H2D on the H100 box (aisp hw). From pinned memory the
// DMA runs at the PCIe link rate, ~55 GB/s each way. 2 x 256 MiB: ~60 ms vs ~10 ms.
// H100: see README.
// Run: aisp bench run --targets ch01:pinned_staging
#include <cstdint>
#include <cstring>
#include <memory>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::ch01 {
namespace {

// Workload: input (n,) fp32 on the device, output (n,) fp32 on the device; output = input, by
// way of a host staging buffer of n floats.
// Napkin math: 4n bytes over PCIe each way. At n = 2^26 (256 MiB): pinned 2 x 256 MiB at
// ~55 GB/s ~= 9.8 ms; pageable ~9 GB/s H2D and a similar D2H rate ~= 60 ms. Declared bytes are
// the device DRAM traffic (input read once, output written once, 512 MiB); the bound is the
// PCIe link, so the harness's SOL % against HBM is low by design (~5%).
//
// Note [chunks]: both variants move the buffer in the same 4 chunks, each D2H then its H2D, in
// order on the harness stream. Chunking changes nothing for the pinned copies (they run back to
// back either way); it keeps the two variants' call shapes identical, and gives each call 8
// device operations.
//
// Note [pageable copies are synchronous]: cudaMemcpyAsync with a pageable host buffer returns to
// the host only after the D2H data has landed in the buffer, and after the H2D data has been
// copied out of it into the driver's staging memory. The baseline's run() therefore blocks the
// host; that is the cost being measured. The last H2D DMA is still ordered on the harness stream,
// so the stop event waits for it.

constexpr std::int64_t chunks = 4;

// Every chunk: device -> staging, then staging -> device, on ctx.stream().
void stage_through_host(run_context& ctx, float* staging) {
  const std::int64_t n = ctx.param("n");
  const auto* input = ctx.as<const float>("input");
  auto* output = ctx.as<float>("output");
  const std::int64_t chunk_elements = (n + chunks - 1) / chunks;
  for (std::int64_t first = 0; first < n; first += chunk_elements) {
    const std::int64_t count = n - first < chunk_elements ? n - first : chunk_elements;
    const auto bytes = static_cast<std::size_t>(count) * sizeof(float);
    AISP_CUDA_CHECK(cudaMemcpyAsync(staging + first, input + first, bytes, cudaMemcpyDeviceToHost,
                                    ctx.stream()));
    AISP_CUDA_CHECK(cudaMemcpyAsync(output + first, staging + first, bytes,
                                    cudaMemcpyHostToDevice, ctx.stream()));
  }
}

// ---- Baseline: pageable staging buffer ----
struct pageable_staging {
  std::unique_ptr<float[]> buffer;
};

void setup_baseline(run_context& ctx) {
  const auto n = static_cast<std::size_t>(ctx.param("n"));
  auto& state = make_state<pageable_staging>(ctx);
  state.buffer = std::make_unique_for_overwrite<float[]>(n);
  std::memset(state.buffer.get(), 0, n * sizeof(float));  // touch every page before timing (M6)
}

void launch_baseline(run_context& ctx) {
  stage_through_host(ctx, state_of<pageable_staging>(ctx).buffer.get());
}

void teardown_baseline(run_context& ctx) { release_state<pageable_staging>(ctx); }

// ---- Optimized: pinned staging buffer ----
// Changed: the staging buffer is page-locked, so both copies are single DMA transfers at the
// link rate and cudaMemcpyAsync returns at once.
struct pinned_staging_buffer {
  float* buffer = nullptr;

  pinned_staging_buffer() = default;
  pinned_staging_buffer(const pinned_staging_buffer&) = delete;
  pinned_staging_buffer& operator=(const pinned_staging_buffer&) = delete;
  ~pinned_staging_buffer() {
    if (buffer != nullptr) cudaFreeHost(buffer);  // destructor path: nothing to report to
  }
};

void setup_optimized(run_context& ctx) {
  const auto n = static_cast<std::size_t>(ctx.param("n"));
  auto& state = make_state<pinned_staging_buffer>(ctx);
  AISP_CUDA_CHECK(cudaMallocHost(&state.buffer, n * sizeof(float)));
  std::memset(state.buffer, 0, n * sizeof(float));
}

void launch_optimized(run_context& ctx) {
  stage_through_host(ctx, state_of<pinned_staging_buffer>(ctx).buffer);
}

void teardown_optimized(run_context& ctx) { release_state<pinned_staging_buffer>(ctx); }

}  // namespace
}  // namespace aisp::ch01

AISP_REGISTER(
    aisp::pair("ch01:pinned_staging")
        .summary("device -> host -> device through a staging buffer: pageable vs pinned")
        .benchmark_size({{"n", std::int64_t{1} << 26}})
        .validation_size({{"n", 1}})
        .validation_size({{"n", 7}})
        .validation_size({{"n", 1003}})
        .validation_size({{"n", 65536}})
        .held_out_size({{"n", 100003}})
        .input("input", aisp::dtype::f32, [](const aisp::workload& w) { return w.get("n"); })
        .output("output", aisp::dtype::f32, [](const aisp::workload& w) { return w.get("n"); })
        .exact_math()  // a copy: bitwise exact on any input (X5 challenge)
        .moves_data_over(aisp::data_path::pcie_one_direction)  // serial round trip: one direction's pinned bandwidth
        .work([](const aisp::workload& w) {
          const double elements = static_cast<double>(w.get("n"));
          return aisp::work_amount{.bytes = 2.0 * 4.0 * elements, .flops = 0.0};
        })
        .reference([](aisp::reference_io& io) {
          const std::span<const double> input = io.input("input");
          const std::span<double> output = io.output("output");
          for (std::size_t i = 0; i < input.size(); ++i) {
            output[i] = input[i];
          }
        })
        .tag("pinned-memory")
        .tag("pcie")
        .add_variant(aisp::kit::with_state(
            "baseline", "pageable host staging buffer (operator new[])",
            aisp::ch01::launch_baseline, aisp::ch01::setup_baseline,
            aisp::ch01::teardown_baseline))
        .add_variant(aisp::kit::with_state(
            "optimized", "pinned host staging buffer (cudaMallocHost)",
            aisp::ch01::launch_optimized, aisp::ch01::setup_optimized,
            aisp::ch01::teardown_optimized)));
