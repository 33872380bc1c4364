// labs/decode's greedy decoding loops on gpu_decoder (issue 21): the prompt's prefill, the decode
// step with a KV cache, and the step that recomputes the whole prefix instead. Every loop writes
// tokens (batch, new_tokens) int32: token 0 from the prompt's last position, token i from the
// step that fed token i - 1. Nothing in a loop waits for the GPU: the row metadata of a step is
// made on the device from the previous step's tokens, so a step can also be captured in a CUDA
// graph and replayed (the positions advance in device memory).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "aisp/check.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "decode_pair_parts.hpp"
#include "gpu_decoder.cuh"

namespace aisp::decode {
namespace {

// The shape of one decoding job: `batch` sequences, each a prompt of `prompt` tokens then
// `new_tokens` greedy tokens; sequence b uses cache slot b.
struct decode_job {
  const float* prompt_draws;  // (batch, prompt) uniform in [0, 1): token_of_draw
  int* tokens;                // (batch, new_tokens) out
  int batch, prompt, new_tokens;
};

// Rows 0..batch * length: sequence b's positions 0..length, its prompt then its tokens so far;
// gather[b] = its last row, whose logits pick the next token.
__global__ void prefix_rows_kernel(decode_job job, int length, int vocab, row_buffers rows, int* gather) {
  const int count = job.batch * length;
  for (int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); r < count; r += static_cast<int>(gridDim.x * blockDim.x)) {
    const int b = r / length;
    const int p = r % length;
    rows.token[r] = p < job.prompt ? token_of_draw(job.prompt_draws[b * job.prompt + p], vocab)
                                   : job.tokens[b * job.new_tokens + (p - job.prompt)];
    rows.slot[r] = b;
    rows.position[r] = p;
    if (p == length - 1) gather[b] = r;
  }
}

// After a launch that picked next[b] for sequence b at `length` positions: it is token
// length - prompt; row b is then set up to feed it at position `length` (the decode step's rows).
__global__ void take_tokens_kernel(decode_job job, int length, const int* next, row_buffers rows) {
  const int b = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (b >= job.batch) return;
  job.tokens[b * job.new_tokens + (length - job.prompt)] = next[b];
  rows.token[b] = next[b];
  rows.slot[b] = b;
  rows.position[b] = length;
}

// The decode step's own bookkeeping: row b fed position p and picked next[b], token p - prompt + 1;
// row b then feeds it at p + 1. Reads the positions from device memory: a captured step replays.
__global__ void advance_rows_kernel(decode_job job, const int* next, row_buffers rows) {
  const int b = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (b >= job.batch) return;
  const int position = rows.position[b];
  job.tokens[b * job.new_tokens + (position - job.prompt + 1)] = next[b];
  rows.token[b] = next[b];
  rows.position[b] = position + 1;
}

// The job of a greedy-decoding pair (decode_pair_parts.hpp): its buffers and sizes.
[[nodiscard]] decode_job job_of(run_context& ctx) {
  return {ctx.as<float>("prompt"), ctx.as<int>("tokens"), static_cast<int>(ctx.param("batch")), static_cast<int>(ctx.param("prompt")),
          static_cast<int>(ctx.param("new_tokens"))};
}

[[nodiscard]] const __nv_bfloat16* weights_of(run_context& ctx) { return ctx.as<const __nv_bfloat16>("weights"); }

constexpr int bookkeeping_threads = 256;

[[nodiscard]] unsigned blocks_for(int count) { return static_cast<unsigned>((count + bookkeeping_threads - 1) / bookkeeping_threads); }

// The prompt's positions of every sequence in one launch, then token 0, and the rows set for the
// first decode step.
void prefill(const gpu_decoder& model, const __nv_bfloat16* weights, const decode_job& job, cudaStream_t stream,
             const layer_plan& plan = {}) {
  const int rows = job.batch * job.prompt;
  prefix_rows_kernel<<<blocks_for(rows), bookkeeping_threads, 0, stream>>>(job, job.prompt, model.config().vocab, model.rows(), model.gather());
  AISP_CHECK_LAUNCH();
  model.forward(weights, model.rows().meta(), rows, model.gather(), job.batch, stream, plan);
  take_tokens_kernel<<<blocks_for(job.batch), bookkeeping_threads, 0, stream>>>(job, job.prompt, model.next(), model.rows());
  AISP_CHECK_LAUNCH();
}

// One position of every sequence through the model, reading the earlier ones from the cache.
void cached_step(const gpu_decoder& model, const __nv_bfloat16* weights, const decode_job& job, cudaStream_t stream,
                 const layer_plan& plan = {}) {
  model.forward(weights, model.rows().meta(), job.batch, nullptr, job.batch, stream, plan);
  advance_rows_kernel<<<blocks_for(job.batch), bookkeeping_threads, 0, stream>>>(job, model.next(), model.rows());
  AISP_CHECK_LAUNCH();
}

// Token `index` (>= 1) with no cache kept: every position of every sequence through the model again.
void recomputed_step(const gpu_decoder& model, const __nv_bfloat16* weights, const decode_job& job, int index, cudaStream_t stream) {
  const int length = job.prompt + index;
  const int rows = job.batch * length;
  prefix_rows_kernel<<<blocks_for(rows), bookkeeping_threads, 0, stream>>>(job, length, model.config().vocab, model.rows(), model.gather());
  AISP_CHECK_LAUNCH();
  model.forward(weights, model.rows().meta(), rows, model.gather(), job.batch, stream);
  take_tokens_kernel<<<blocks_for(job.batch), bookkeeping_threads, 0, stream>>>(job, length, model.next(), model.rows());
  AISP_CHECK_LAUNCH();
}

// The decoder of a loop with a cache: launches of up to the prompt's rows, a slot a sequence.
void setup_cached_decoder(run_context& ctx) {
  const decode_job job = job_of(ctx);
  make_state<gpu_decoder>(ctx, config_of(ctx.param("model")), job.batch * job.prompt, job.batch, job.prompt + job.new_tokens);
}

// Greedy decoding with the cache, every step's kernels launched one by one.
void decode_with_cache(run_context& ctx) {
  const decode_job job = job_of(ctx);
  const auto& model = state_of<gpu_decoder>(ctx);
  model.pack(weights_of(ctx), ctx.stream());
  prefill(model, weights_of(ctx), job, ctx.stream());
  for (int i = 1; i < job.new_tokens; ++i) cached_step(model, weights_of(ctx), job, ctx.stream());
}

}  // namespace
}  // namespace aisp::decode
