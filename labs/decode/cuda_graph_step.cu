// cuda_graph_step: the decode step of a 1B Llama-style model at batch 1, launched kernel by kernel
// (84 launches a token: 5 a layer, 4 around them) against the same step captured once in a CUDA
// graph and replayed for every token.
// Why faster: at batch 1 a step's kernels are short (the 2048 x 3072 projection streams 12.6 MB,
// ~4 us at 3.0 TB/s) and the host's launches cost about as much; a graph replays the step with
// one launch, and the GPU runs its kernels back to back. The step reads its positions from
// device memory and advances them itself (decode_loops.cuh), so one capture serves every token.
// H100/H200: see README. Run: aisp bench run --targets labs/decode:cuda_graph_step
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "decode_loops.cuh"
#include "decode_pair_parts.hpp"

namespace aisp::decode {
namespace {

// Napkin math at the benchmark size (1B model, batch 1, prompt 8, 64 tokens): every step streams
// the 2.2 GB of weights, ~0.74 ms at 3.0 TB/s (H100) and ~0.52 ms at 4.2 TB/s (H200), through
// 100 kernels: 5-7 us each, near what a launch costs the host. The work is 64 x 2.2 GB; the
// graph should bring the loop to the copy ceiling (the issue's target: 80% of it).

// ---- baseline: the step's kernels launched one by one ----
// decode_with_cache (decode_loops.cuh), the same loop as labs/decode:kv_cache's optimized variant.

// ---- optimized: the step captured once, replayed a token ----
// The graph holds the buffers' addresses: it is captured again if the harness moved a buffer
// (Note [fresh addresses]); a capture records the launches without running them.
class graph_decoder {
 public:
  graph_decoder(const decoder_config& config, const decode_job& job)
      : model_(config, job.batch * job.prompt, job.batch, job.prompt + job.new_tokens) {
    AISP_CUDA_CHECK(cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking));
  }
  graph_decoder(const graph_decoder&) = delete;
  graph_decoder& operator=(const graph_decoder&) = delete;
  ~graph_decoder() {  // nobody is left to tell of a failure here
    if (step_ != nullptr) static_cast<void>(cudaGraphExecDestroy(step_));
    static_cast<void>(cudaStreamDestroy(capture_stream_));
  }

  [[nodiscard]] const gpu_decoder& model() const { return model_; }

  // The step graph for these buffers, captured where it is new or they moved.
  cudaGraphExec_t step_for(const __nv_bfloat16* weights, const decode_job& job) {
    if (step_ != nullptr && weights == captured_weights_ && job.tokens == captured_tokens_ && job.prompt_draws == captured_draws_) return step_;
    if (step_ != nullptr) AISP_CUDA_CHECK(cudaGraphExecDestroy(step_));
    step_ = nullptr;
    cudaGraph_t graph = nullptr;
    AISP_CUDA_CHECK(cudaStreamBeginCapture(capture_stream_, cudaStreamCaptureModeThreadLocal));
    cached_step(model_, weights, job, capture_stream_);
    AISP_CUDA_CHECK(cudaStreamEndCapture(capture_stream_, &graph));
    const cudaError_t made = cudaGraphInstantiate(&step_, graph, 0);
    AISP_CUDA_CHECK(cudaGraphDestroy(graph));
    AISP_CUDA_CHECK(made);
    captured_weights_ = weights;
    captured_tokens_ = job.tokens;
    captured_draws_ = job.prompt_draws;
    return step_;
  }

 private:
  gpu_decoder model_;
  cudaStream_t capture_stream_ = nullptr;
  cudaGraphExec_t step_ = nullptr;
  const void* captured_weights_ = nullptr;
  const void* captured_tokens_ = nullptr;
  const void* captured_draws_ = nullptr;
};

void setup_graph(run_context& ctx) {
  auto& state = make_state<graph_decoder>(ctx, config_of(ctx.param("model")), job_of(ctx));
  state.model().pack(weights_of(ctx), ctx.stream());  // a capture records forward(), which asks for packed weights
  static_cast<void>(state.step_for(weights_of(ctx), job_of(ctx)));
}

void run_graph(run_context& ctx) {
  const decode_job job = job_of(ctx);
  auto& state = state_of<graph_decoder>(ctx);
  state.model().pack(weights_of(ctx), ctx.stream());  // the graph reads the packed copy: made afresh in every call
  const cudaGraphExec_t step = state.step_for(weights_of(ctx), job);
  prefill(state.model(), weights_of(ctx), job, ctx.stream());
  for (int i = 1; i < job.new_tokens; ++i) AISP_CUDA_CHECK(cudaGraphLaunch(step, ctx.stream()));
}

[[nodiscard]] pair cuda_graph_step_pair() {
  pair declared("labs/decode:cuda_graph_step");
  with_greedy_decode_contract(declared)
      .summary("the decode step of a 1B Llama-style model at batch 1: 84 kernel launches a token against one graph launch")
      .benchmark_size({{"model", 2}, {"batch", 1}, {"prompt", 8}, {"new_tokens", 64}})
      .times_host_launches("84 launches a token against one graph launch: at batch 1 the host's launches are what a graph saves")
      .tag("cuda-graphs")
      .add_variant(decoder_variant("baseline",
                                   "the cached decode step's 84 kernels launched one by one for every token (the prefill "
                                   "likewise)",
                                   decode_with_cache, setup_cached_decoder, release_state<gpu_decoder>))
      .add_variant(decoder_variant("optimized",
                                   "the same step captured once in a CUDA graph (positions advance in device memory) and "
                                   "replayed for every token: one launch a token",
                                   run_graph, setup_graph, release_state<graph_decoder>));
  return declared;
}

}  // namespace
}  // namespace aisp::decode

AISP_REGISTER(aisp::decode::cuda_graph_step_pair());
