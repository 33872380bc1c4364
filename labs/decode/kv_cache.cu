// kv_cache: greedy decoding of a 1B Llama-style model (decoder_reference.hpp) without a KV cache
// (every token recomputes the whole prefix) against decoding with one (every token is one row).
// Why faster: token i costs prompt + i rows of every matmul and a causal attention over them
// without the cache; with it, one row and one attention row over the cached K and V. Both run the
// same batch-invariant kernels (decoder_kernels.cuh), so their tokens agree bit for bit.
// H100/H200: see README. Run: aisp bench run --targets labs/decode:kv_cache
#include <cuda_bf16.h>

#include <algorithm>

#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "decode_loops.cuh"
#include "decode_pair_parts.hpp"

namespace aisp::decode {
namespace {

// Napkin math at the benchmark size (1B model, batch 1, prompt 128, 32 tokens): the cached loop
// reads the 2.2 GB of weights 32 times (~23 ms at 3.0 TB/s) plus the prompt's prefill (128 rows
// of fp32 SIMT matmul, ~0.26 TFLOP); without the cache token i re-runs 128 + i rows, ~31 x 0.3
// TFLOP of fp32 SIMT work: about 30 times the cached loop's.

// ---- baseline: no cache; token i re-runs the prompt and the i tokens before it ----
void setup_recompute(run_context& ctx) {
  const decode_job job = job_of(ctx);
  make_state<gpu_decoder>(ctx, config_of(ctx.param("model")), job.batch * (job.prompt + job.new_tokens - 1), job.batch,
                          job.prompt + job.new_tokens);
}

void run_recompute(run_context& ctx) {
  const decode_job job = job_of(ctx);
  const auto& model = state_of<gpu_decoder>(ctx);
  model.pack(weights_of(ctx), ctx.stream());
  prefill(model, weights_of(ctx), job, ctx.stream());
  for (int i = 1; i < job.new_tokens; ++i) recomputed_step(model, weights_of(ctx), job, i, ctx.stream());
}

// ---- optimized: the prompt's K and V cached once; each token is one row a sequence ----
// decode_with_cache (decode_loops.cuh).

[[nodiscard]] pair kv_cache_pair() {
  pair declared("labs/decode:kv_cache");
  with_greedy_decode_contract(declared)
      .summary("greedy decoding of a 1B Llama-style model (bf16 weights, fp32 activations): recompute the prefix every token "
               "against a KV cache")
      .benchmark_size({{"model", 2}, {"batch", 1}, {"prompt", 128}, {"new_tokens", 32}})
      .tag("kv-cache")
      .add_variant(decoder_variant("baseline",
                                   "no cache: token i runs all prompt + i positions through every layer again (causal attention "
                                   "over them), the model's own batch-invariant kernels",
                                   run_recompute, setup_recompute, release_state<gpu_decoder>))
      .add_variant(decoder_variant("optimized",
                                   "K and V of every position kept in a bf16 cache: after the prompt's prefill, each token is one "
                                   "row through the layers and one attention row over the cache",
                                   decode_with_cache, setup_cached_decoder, release_state<gpu_decoder>));
  return declared;
}

}  // namespace
}  // namespace aisp::decode

AISP_REGISTER(aisp::decode::kv_cache_pair());
