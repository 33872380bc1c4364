// graph_chain: a chain of `steps` dependent elementwise kernels, y = f_steps(...f_1(x)), with
// f_k(v) = tanh(a_k v + b_k): a small MLP-like stack of per-element layers on n fp32 values.
// Baseline: `steps` kernel launches on the stream, one after another, each waiting on the last.
// Optimized: the same launches captured once into a CUDA graph in setup(); run() is one
// cudaGraphLaunch.
// Why faster: each step is ~1-2 us of GPU work (64K elements, L2-resident after the first step),
// but a stream launch costs ~3.2 us of host and driver time (aisp hw launch throughput), so the
// baseline runs at the host's launch rate with the GPU idle between steps. A replayed graph
// submits all steps in one call and the GPU walks the chain at ~0.8 us per node. H100: see README.
// Run: aisp bench run --targets ch01:graph_chain
#include <cmath>
#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/launch_shape.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::ch01 {
namespace {

// Workload: x (n,) fp32, y (n,) fp32. steps kernels; the first reads x and writes y, each later
// one updates y in place: y <- tanh(a_k y + b_k).
// Napkin math: bytes = 4n read + 4n written (the intermediate steps stay in the 50 MB L2);
// FLOPs = 2 per element per step (the FMA; tanh is not counted). At n = 65536 and 48 steps:
// 512 KB through DRAM, ~0.2 us at 3.0 TB/s, so the pair is bound by launch overhead, not by
// memory: baseline ~48 x 3.2 us ~= 150 us, graph ~48 x ~1.2-1.8 us ~= 60-85 us.
//
// Note [step constants]: a_k = 1/2 + ((37 k) mod 16) / 32 in [0.5, 0.97] and
// b_k = (((13 k) mod 17) - 8) / 32 in [-0.25, 0.25]: multiples of 1/32, exact in fp32 and fp64,
// so the reference sees the same constants as the kernels. |a_k| < 1 makes each layer a
// contraction: rounding errors shrink as they pass through later steps instead of growing.
//
// Note [chain tolerance]: per step the kernel rounds the FMA (0.5 ulp) and tanhf (at most 2 ulp,
// CUDA math API); with |a_k y + b_k| <= 1.25 and |y| < 1 that is <= 1.8e-7 absolute. Each later
// step multiplies an earlier error by a_k tanh' <= 0.97, so the total stays below
// 1.8e-7 / (1 - 0.97) ~= 6e-6 for any number of steps. atol 1e-5 covers it; outputs near 0 would
// fail any purely relative test. Both variants run the same kernels in the same order, so they
// agree bitwise; the tolerance is for the fp64 reference only.

constexpr int block_threads = 256;

[[nodiscard]] float step_scale(std::int64_t step) {
  return 0.5f + static_cast<float>((37 * step) % 16) / 32.0f;
}
[[nodiscard]] float step_bias(std::int64_t step) {
  return static_cast<float>((13 * step) % 17 - 8) / 32.0f;
}

// One layer of the chain. `input` may be `output` (in-place steps), so neither is __restrict__.
__global__ void tanh_layer_step_kernel(const float* input, float* output, std::int64_t n,
                                       float scale, float bias) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    output[i] = tanhf(fmaf(scale, input[i], bias));
  }
}

// The whole chain on `stream`: used by the baseline on the harness stream every call, and by
// the optimized variant once, under capture, in setup().
void enqueue_chain(const run_context& ctx, cudaStream_t stream) {
  const std::int64_t n = ctx.param("n");
  const std::int64_t steps = ctx.param("steps");
  AISP_EXPECTS(steps >= 1, "the chain needs at least one step");
  const auto* x = ctx.as<const float>("x");
  auto* y = ctx.as<float>("y");
  const unsigned int grid = wave_grid(n, block_threads);
  for (std::int64_t step = 0; step < steps; ++step) {
    const float* input = step == 0 ? x : y;  // step 0 writes every element of y
    tanh_layer_step_kernel<<<grid, block_threads, 0, stream>>>(input, y, n, step_scale(step),
                                                               step_bias(step));
    AISP_CHECK_LAUNCH();
  }
}

// ---- Baseline: one stream launch per step ----
void launch_baseline(run_context& ctx) { enqueue_chain(ctx, ctx.stream()); }

// ---- Optimized: the chain captured once into a CUDA graph ----
// Changed: setup() records the same launches into a graph on a stream of its own and
// instantiates it; run() submits all steps with one cudaGraphLaunch on the harness stream. The
// graph holds x's and y's addresses; the harness re-runs setup() whenever it moves the buffers,
// and new data at the same addresses flows through the replay unchanged.
struct chain_graph {
  cudaStream_t capture_stream = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;

  chain_graph() = default;
  chain_graph(const chain_graph&) = delete;
  chain_graph& operator=(const chain_graph&) = delete;
  ~chain_graph() {  // destructor path: a failed release has no one left to tell
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
    if (capture_stream != nullptr) cudaStreamDestroy(capture_stream);
  }
};

void setup_optimized(run_context& ctx) {
  static_cast<void>(resident_blocks(block_threads));  // device queries before, not during, capture
  auto& state = make_state<chain_graph>(ctx);
  AISP_CUDA_CHECK(cudaStreamCreateWithFlags(&state.capture_stream, cudaStreamNonBlocking));
  // Thread-local capture: nothing another thread enqueues can fall into this graph.
  AISP_CUDA_CHECK(cudaStreamBeginCapture(state.capture_stream, cudaStreamCaptureModeThreadLocal));
  try {
    enqueue_chain(ctx, state.capture_stream);
  } catch (...) {
    cudaGraph_t abandoned = nullptr;
    cudaStreamEndCapture(state.capture_stream, &abandoned);
    if (abandoned != nullptr) cudaGraphDestroy(abandoned);
    throw;
  }
  AISP_CUDA_CHECK(cudaStreamEndCapture(state.capture_stream, &state.graph));
  AISP_CUDA_CHECK(cudaGraphInstantiate(&state.exec, state.graph, 0));
  // Upload now, on the stream run() launches into: the first replay on a stream it was not
  // uploaded to builds the launch's host-side structures then (hundreds of heap allocations
  // inside run(), seen on the H100 with an upload on the capture stream).
  AISP_CUDA_CHECK(cudaGraphUpload(state.exec, ctx.stream()));
  AISP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
}

void launch_optimized(run_context& ctx) {
  AISP_CUDA_CHECK(cudaGraphLaunch(state_of<chain_graph>(ctx).exec, ctx.stream()));
}

void teardown_optimized(run_context& ctx) { release_state<chain_graph>(ctx); }

}  // namespace
}  // namespace aisp::ch01

AISP_REGISTER(
    aisp::pair("ch01:graph_chain")
        .summary("48 dependent tanh layers: 48 stream launches vs one replayed CUDA graph")
        .times_host_launches("48 stream launches against one graph launch: the host's launches are the lesson")
        .benchmark_size({{"n", 65536}, {"steps", 48}})
        .validation_size({{"n", 1}, {"steps", 1}})
        .validation_size({{"n", 7}, {"steps", 3}})
        .validation_size({{"n", 1003}, {"steps", 48}})
        .validation_size({{"n", 65536}, {"steps", 17}})
        .held_out_size({{"n", 70001}, {"steps", 29}})
        .input("x", aisp::dtype::f32, [](const aisp::workload& w) { return w.get("n"); })
        .output("y", aisp::dtype::f32, [](const aisp::workload& w) { return w.get("n"); })
        .work([](const aisp::workload& w) {
          const double elements = static_cast<double>(w.get("n"));
          const double steps = static_cast<double>(w.get("steps"));
          return aisp::work_amount{.bytes = 2.0 * 4.0 * elements, .flops = 2.0 * elements * steps};
        })
        .reference([](aisp::reference_io& io) {
          const auto steps = io.param("steps");
          const std::span<const double> x = io.input("x");
          const std::span<double> y = io.output("y");
          for (std::size_t i = 0; i < x.size(); ++i) {
            double value = x[i];
            for (std::int64_t k = 0; k < steps; ++k) {
              const double scale = 0.5 + static_cast<double>((37 * k) % 16) / 32.0;
              const double bias = static_cast<double>((13 * k) % 17 - 8) / 32.0;
              value = std::tanh(scale * value + bias);
            }
            y[i] = value;
          }
        })
        .tolerance_override(aisp::tolerance{
            .rtol = 1e-5,
            .atol = 1e-5,
            .max_rel_l2 = 1e-5,
            .reason = "each step rounds an FMA (0.5 ulp) and tanhf (<= 2 ulp): <= 1.8e-7 absolute "
                      "per step on values below 1.25; every step contracts earlier errors by "
                      "<= 0.97, so the total stays below 6e-6 for any chain length (see Note "
                      "[chain tolerance]); outputs near 0 need the absolute term"})
        .tag("launch-overhead")
        .tag("cuda-graphs")
        .add_variant("baseline", "one stream launch per step, 48 launches per call",
                     aisp::ch01::launch_baseline)
        .add_variant(aisp::kit::with_state(
            "optimized",
            "the chain captured once into a CUDA graph in setup(), one cudaGraphLaunch",
            aisp::ch01::launch_optimized, aisp::ch01::setup_optimized, aisp::ch01::teardown_optimized)));
