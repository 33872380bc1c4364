// speculative_decoding: greedy decoding of a 1B Llama-style target with a KV cache (the baseline)
// against draft-and-verify (the optimized variant): the draft, the target's own first quarter of
// layers with its final norm and head, proposes `drafts` tokens one at a time; the target then
// runs the last token and the drafts as one launch of drafts + 1 rows and keeps the drafts up to
// the first it disagrees with, plus its own next token (speculation.hpp).
// Note [controlled acceptance]: with random weights a draft would agree with the target by
// chance only, so the target's later layers add 2^-late_shift of their outputs to the residual
// stream (decoder_reference.hpp, gpu_decoder.cuh's layer_plan); the three pairs below set the
// acceptance rate that way, and each records the drafts accepted a round (`accepted_drafts`).
// The tokens are the target's greedy tokens whatever the draft proposes: the verification rows
// give what single rows give (Note [batch-invariant rows]), so the optimized tokens equal the
// baseline's bit for bit, and both the fp64 reference's at the validation sizes.
// Why faster: a round costs `drafts` draft steps (~30% of a target step each at 1B) and one
// target launch whose rows share every weight read; it makes 1 to drafts + 1 tokens. At a low
// acceptance rate it is slower, which is what the pairs are there to show.
// H200 (2026-11-29): see README.
// Run: aisp bench run --targets labs/decode:speculative_decoding_shift_6
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "aisp/check.hpp"
#include "aisp/device_scratch.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "decode_loops.cuh"
#include "decode_pair_parts.hpp"
#include "speculation.hpp"

namespace aisp::decode {
namespace {

// Page-locked host ints: copies to and from them are DMA, with no staging or allocation inside
// the driver while run() is timed (M1).
class pinned_ints {
 public:
  explicit pinned_ints(std::size_t count) : count_(count) { AISP_CUDA_CHECK(cudaMallocHost(&data_, count * sizeof(int))); }
  ~pinned_ints() { static_cast<void>(cudaFreeHost(data_)); }
  pinned_ints(const pinned_ints&) = delete;
  pinned_ints& operator=(const pinned_ints&) = delete;
  [[nodiscard]] int* data() const { return data_; }
  [[nodiscard]] std::span<const int> span() const { return {data_, count_}; }
  int& operator[](std::size_t i) const { return data_[i]; }

 private:
  int* data_ = nullptr;
  std::size_t count_;
};

struct speculative_plans {
  layer_plan target, draft;
};

[[nodiscard]] speculative_plans plans_of(const workload& w) {
  const auto c = config_of(w.get("model"));
  const int draft = draft_layers(c.layers);
  return {{-1, draft, static_cast<float>(late_scale_of(w.get("late_shift")))}, {draft, c.layers, 1.0f}};
}

// The model with room for a round's rows past the last token, and a round's host and device
// arrays: made in setup(), so run() allocates nothing.
class speculative_decoder {
 public:
  explicit speculative_decoder(const workload& w)
      : drafts_(static_cast<int>(w.get("drafts"))),
        plans_(plans_of(w)),
        model_(config_of(w.get("model")), static_cast<int>(std::max(w.get("batch") * w.get("prompt"), w.get("drafts") + 1)),
               static_cast<int>(w.get("batch")), static_cast<int>(w.get("prompt") + w.get("new_tokens") + w.get("drafts") + 1)),
        round_(static_cast<std::size_t>(3 * (drafts_ + 1)) * sizeof(int)),
        staging_(static_cast<std::size_t>(2 * (drafts_ + 1))),
        proposal_(static_cast<std::size_t>(drafts_ + 1)),
        verified_(static_cast<std::size_t>(drafts_ + 1)),
        emitted_(static_cast<std::size_t>(w.get("new_tokens"))) {
    AISP_EXPECTS(drafts_ >= 1, "speculative decoding needs at least one draft token a round");
  }

  [[nodiscard]] const gpu_decoder& model() const { return model_; }
  [[nodiscard]] const layer_plan& target() const { return plans_.target; }

  // Every sequence's prompt at once, then each sequence's tokens in rounds of draft and verify.
  void decode(run_context& ctx) {
    const decode_job job = job_of(ctx);
    const auto* weights = weights_of(ctx);
    model_.pack(weights, ctx.stream());
    prefill(model_, weights, job, ctx.stream(), plans_.target);
    for (int b = 0; b < job.batch; ++b) {
      AISP_CUDA_CHECK(cudaMemcpyAsync(emitted_.data(), job.tokens + static_cast<std::ptrdiff_t>(b) * job.new_tokens, sizeof(int),
                                      cudaMemcpyDeviceToHost, ctx.stream()));
      AISP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
      int made = 1;  // token 0, from the prefill
      while (made < job.new_tokens) {
        const int position = job.prompt + made - 1;  // where the last token is fed
        const int accepted = run_round(weights, b, position, emitted_.data() + made - 1, ctx.stream());
        ctx.record("accepted_drafts", accepted);
        const int keep = std::min(accepted + 1, job.new_tokens - made);
        for (int i = 0; i < keep; ++i) emitted_[static_cast<std::size_t>(made + i)] = verified_[static_cast<std::size_t>(i)];
        AISP_CUDA_CHECK(cudaMemcpyAsync(job.tokens + static_cast<std::ptrdiff_t>(b) * job.new_tokens + made, emitted_.data() + made,
                                        static_cast<std::size_t>(keep) * sizeof(int), cudaMemcpyHostToDevice, ctx.stream()));
        made += keep;
      }
    }
    AISP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));  // emitted_ is rewritten by the next call
  }

 private:
  [[nodiscard]] int* device(int which) const { return static_cast<int*>(round_.data()) + which * (drafts_ + 1); }

  // One round for sequence (and slot) b whose token *last is fed at `position`: the drafts, then
  // the target over it and the drafts; the accepted count, with verified_ the target's tokens.
  // Ends synchronized: the pinned arrays are free to be written again.
  int run_round(const __nv_bfloat16* weights, int b, int position, const int* last, cudaStream_t stream) {
    int* tokens = device(0);
    int* slots = device(1);
    int* positions = device(2);
    const int rows = drafts_ + 1;
    for (int i = 0; i < rows; ++i) {
      staging_[static_cast<std::size_t>(i)] = b;
      staging_[static_cast<std::size_t>(rows + i)] = position + i;
    }
    AISP_CUDA_CHECK(cudaMemcpyAsync(slots, staging_.data(), 2 * static_cast<std::size_t>(rows) * sizeof(int), cudaMemcpyHostToDevice, stream));
    AISP_CUDA_CHECK(cudaMemcpyAsync(tokens, last, sizeof(int), cudaMemcpyHostToDevice, stream));
    for (int i = 0; i < drafts_; ++i) {  // draft token i + 1 from token i, one row at a time
      model_.forward(weights, {tokens + i, slots + i, positions + i}, 1, nullptr, 1, stream, plans_.draft);
      AISP_CUDA_CHECK(cudaMemcpyAsync(tokens + i + 1, model_.next(), sizeof(int), cudaMemcpyDeviceToDevice, stream));
    }
    model_.forward(weights, {tokens, slots, positions}, rows, nullptr, rows, stream, plans_.target);
    AISP_CUDA_CHECK(cudaMemcpyAsync(proposal_.data(), tokens, static_cast<std::size_t>(rows) * sizeof(int), cudaMemcpyDeviceToHost, stream));
    AISP_CUDA_CHECK(cudaMemcpyAsync(verified_.data(), model_.next(), static_cast<std::size_t>(rows) * sizeof(int), cudaMemcpyDeviceToHost, stream));
    AISP_CUDA_CHECK(cudaStreamSynchronize(stream));
    return accepted_drafts(proposal_.span(), verified_.span());
  }

  int drafts_;
  speculative_plans plans_;
  gpu_decoder model_;
  device_scratch round_;  // a round's tokens, slots and positions
  pinned_ints staging_, proposal_, verified_, emitted_;
};

void setup_speculative(run_context& ctx) { make_state<speculative_decoder>(ctx, ctx.work()); }
void run_speculative(run_context& ctx) { state_of<speculative_decoder>(ctx).decode(ctx); }

// The baseline: the same target, a token a step with the cache.
void run_plain(run_context& ctx) {
  const decode_job job = job_of(ctx);
  const auto& v = state_of<speculative_decoder>(ctx);
  v.model().pack(weights_of(ctx), ctx.stream());
  prefill(v.model(), weights_of(ctx), job, ctx.stream(), v.target());
  for (int i = 1; i < job.new_tokens; ++i) cached_step(v.model(), weights_of(ctx), job, ctx.stream(), v.target());
}

// Fewest passes over the target's weights: the prefill's gives the first token, and a later pass
// verifies at most drafts + 1 tokens, each round starting from the last one's. The draft's passes
// are the optimization's own cost, not the job's, so they are left out of the floor.
[[nodiscard]] double speculative_passes(const workload& w) {
  const auto later = static_cast<double>(w.get("new_tokens") - 1);
  return 1.0 + std::ceil(later / static_cast<double>(w.get("drafts") + 1));
}

[[nodiscard]] work_amount speculative_work(const workload& w) { return decode_work(w, speculative_passes(w)); }

// The fp64 truth: the scaled target's greedy tokens.
void speculative_reference(reference_io& io) {
  const auto c = config_of(io.param("model"));
  decoder_reference model{c, io.input("weights")};
  model.scale_late_layers(draft_layers(c.layers), late_scale_of(io.param("late_shift")));
  write_greedy_tokens(io, model);
}

[[nodiscard]] pair speculative_pair(std::int64_t shift, const std::string& rate) {
  pair declared("labs/decode:speculative_decoding_shift_" + std::to_string(shift));
  with_greedy_decode_buffers(declared)
      .reference(speculative_reference)
      .work(speculative_work)
      .sequential_passes(speculative_passes,
                         "a round's pass over the target's weights verifies at most drafts + 1 tokens and needs the last round's")
      .summary("greedy decoding of the 1B target, its later layers scaled by 2^-" + std::to_string(shift) + " (" + rate +
               "): a token a step against 4 draft tokens from its first 4 layers, verified in one launch")
      .benchmark_size({{"model", 2}, {"batch", 1}, {"prompt", 32}, {"new_tokens", 64}, {"drafts", 4}, {"late_shift", shift}})
      .validation_size({{"model", 0}, {"batch", 1}, {"prompt", 1}, {"new_tokens", 7}, {"drafts", 1}, {"late_shift", shift}})
      .validation_size({{"model", 0}, {"batch", 2}, {"prompt", 5}, {"new_tokens", 9}, {"drafts", 3}, {"late_shift", shift}})
      .validation_size({{"model", 1}, {"batch", 1}, {"prompt", 7}, {"new_tokens", 33}, {"drafts", 4}, {"late_shift", shift}})
      .held_out_size({{"model", 1}, {"batch", 2}, {"prompt", 11}, {"new_tokens", 17}, {"drafts", 2}, {"late_shift", shift}})
      .times_host_launches("the host reads each round's accepted drafts before it launches the next round")
      .data_dependent_launches("a round makes 1 to drafts + 1 tokens, as many as the target accepts, so the rounds a call runs "
                               "depend on its weights and prompts")
      .add_variant(decoder_variant("baseline", "the target alone: a token a step with the KV cache", run_plain, setup_speculative,
                                   release_state<speculative_decoder>))
      .add_variant(decoder_variant("optimized",
                                   "draft and verify: 4 tokens from the first 4 layers one at a time, then the target over the "
                                   "5 positions in one launch; the drafts kept up to the first disagreement, and the target's next",
                                   run_speculative, setup_speculative, release_state<speculative_decoder>));
  return declared;
}

}  // namespace
}  // namespace aisp::decode

AISP_REGISTER(aisp::decode::speculative_pair(0, "the plain model: drafts rarely accepted"));
AISP_REGISTER(aisp::decode::speculative_pair(3, "a middling acceptance rate"));
AISP_REGISTER(aisp::decode::speculative_pair(6, "most drafts accepted"));
