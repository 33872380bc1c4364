// Planted bugs for scripts/sanitize.sh, not cheats of the judge: the judge cannot see them (the
// outputs are right), only compute-sanitizer can. They prove that the script's runs reach the
// kernels in the workers (a memcheck or racecheck that never attaches to a worker reports
// "clean" for every pair). Group sanitizer_gpu, outside cheats_gpu: the cheats suites skip it.
// Run on a GPU: scripts/device_checks.sh BIN OUT sanitizercheck
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

// y = 2x + 1, and the last thread also reads the element just past the end of x. The value
// cannot change y (x is in [-1, 1), never 1e30), so only memcheck can tell.
__global__ void affine_reading_past_end(const float* x, float* y, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float value = 2.0f * x[i] + 1.0f;
  if (i == n - 1 && x[i + 1] == 1e30f) value = 0.0f;
  y[i] = value;
}

// y = 2x + 1 through shared memory, and each thread also reads the slot of a thread one warp
// away with no barrier between the writes and that read: a cross-warp read-after-write race that
// cannot change y (the slot holds an x, never 1e30), so only racecheck can tell.
__global__ void affine_racing_in_shared(const float* x, float* y, std::int64_t n) {
  __shared__ float staged[block_threads];
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  staged[threadIdx.x] = i < n ? x[i] : 0.0f;
  const float neighbour = staged[(threadIdx.x + 32) % block_threads];  // no __syncthreads(): the race
  if (i >= n) return;
  y[i] = neighbour == 1e30f ? 0.0f : 2.0f * staged[threadIdx.x] + 1.0f;
}

template <auto Kernel>
void launch(run_context& ctx) {
  const std::int64_t n = ctx.num_elements("x");
  Kernel<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(ctx.as<const float>("x"), ctx.as<float>("y"), n);
  AISP_CHECK_LAUNCH();
}

pair sanitizer_fixture(const std::string& name, const std::string& tool, const std::string& what, stage_fn run) {
  variant buggy = plain(std::move(run));
  buggy.name = "optimized";
  buggy.summary = "planted bug for " + tool + ": " + what;
  return affine_declaration("sanitizer_gpu:" + name, "planted bug for compute-sanitizer " + tool + ": " + what)
      .tag("sanitizer:" + tool)
      .add_variant(std::move(buggy));
}

}  // namespace

AISP_REGISTER(sanitizer_fixture("reads_past_its_input", "memcheck", "the last thread reads one float past the end of x",
                                launch<affine_reading_past_end>));
AISP_REGISTER(sanitizer_fixture("races_in_shared_memory", "racecheck",
                                "each thread reads another warp's shared slot with no barrier after the writes",
                                launch<affine_racing_in_shared>));

}  // namespace aisp::cheats_gpu
