// What labs/decode's greedy-decoding pairs declare alike (issue 21): the model sizes, the buffers
// (the weights, the prompts, the tokens), the fp64 reference, the work and the throughput goal.
// Host-only: the pair files add their variants and their benchmark size.
//
// Workload parameters: `model` (0: tiny, 1: small, 2: the 1B benchmark model), `batch`
// sequences, `prompt` tokens each, `new_tokens` greedy tokens each. The tiny and small models are
// the validation sizes, where the fp64 reference decodes too (greedy tokens agree for 33 tokens
// at the small one); the 1B model is the benchmark size, where every variant's tokens must equal
// the baseline's bit for bit (Note [batch-invariant rows]).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "decoder_reference.hpp"

namespace aisp::decode {

// A labs/decode variant: its matvecs run on the tf32 tensor cores with x in two pieces (fp32
// accuracy: Note [tensor-core rows] in decode_matvec.cuh), which it declares (W2 asks it to).
[[nodiscard]] inline variant decoder_variant(std::string name, std::string summary, stage_fn run, stage_fn setup, stage_fn teardown) {
  variant v = kit::with_state(std::move(name), std::move(summary), std::move(run), std::move(setup), std::move(teardown));
  v.math = math_unit::tf32_tensor;
  return v;
}

// The small model: several 256-value chunks a matvec lane, GQA groups of 4, a 1000-token vocabulary.
[[nodiscard]] inline decoder_config small_model() { return {2, 256, 8, 2, 32, 512, 1000, 10000.0, 1e-5}; }

[[nodiscard]] inline decoder_config config_of(std::int64_t model) {
  AISP_EXPECTS(model >= 0 && model <= 2, "labs/decode: model is 0 (tiny), 1 (small) or 2 (1B)");
  if (model == 0) return decoder_config{};
  return model == 1 ? small_model() : one_billion();
}

// Each sequence's prompt through `model` (the pair's fp64 truth), then its greedy tokens into
// the `tokens` output.
inline void write_greedy_tokens(reference_io& io, decoder_reference& model) {
  const auto c = config_of(io.param("model"));
  const auto batch = static_cast<int>(io.param("batch"));
  const auto prompt = static_cast<int>(io.param("prompt"));
  const auto new_tokens = static_cast<int>(io.param("new_tokens"));
  const auto draws = io.input("prompt");
  const auto tokens = io.output("tokens");
  for (int b = 0; b < batch; ++b) {
    std::vector<int> ids(static_cast<std::size_t>(prompt));
    for (int p = 0; p < prompt; ++p) ids[static_cast<std::size_t>(p)] = token_of_draw(draws[static_cast<std::size_t>(b * prompt + p)], c.vocab);
    const auto out = model.greedy(ids, new_tokens);
    for (int i = 0; i < new_tokens; ++i) tokens[static_cast<std::size_t>(b * new_tokens + i)] = out[static_cast<std::size_t>(i)];
  }
}

// The fp64 truth of the plain model.
inline void greedy_tokens_reference(reference_io& io) {
  decoder_reference model{config_of(io.param("model")), io.input("weights")};
  write_greedy_tokens(io, model);
}

// Fewest bytes a decode moves: the weights once a pass, `passes` of them (Note [sequential
// passes]; plain decoding: once for the prompt and once a later token, each needing the last). The cache's reads are left out: it is the model's
// scratch, not a declared buffer, and at these sizes under 1% of the weights' bytes. FLOPs: 2 a
// weight a processed row with a cache (the embedding is a lookup), and attention's two products.
[[nodiscard]] inline work_amount decode_work(const workload& w, double passes) {
  const auto c = config_of(w.get("model"));
  const double batch = static_cast<double>(w.get("batch"));
  const double prompt = static_cast<double>(w.get("prompt"));
  const double new_tokens = static_cast<double>(w.get("new_tokens"));
  const double rows = batch * (prompt + new_tokens - 1);
  const auto matmul_weights = static_cast<double>(c.matmul_parameters());
  const double context = prompt + new_tokens - 1;
  const double attended = batch * context * (context + 1) / 2;  // (row, key) pairs: each row sees the keys up to it
  work_amount work;
  work.bytes = static_cast<double>(c.parameters()) * 2.0 * passes;
  work.flops = 2.0 * matmul_weights * rows + attended * c.layers * 4.0 * c.q_width();
  return work;
}
// Plain decoding: a pass a token.
[[nodiscard]] inline work_amount greedy_decode_work(const workload& w) {
  return decode_work(w, static_cast<double>(w.get("new_tokens")));
}

// What every greedy-decoding pair declares but its sizes and reference: the weights and the
// prompts in, the tokens out, the work, a pass a token, and tokens a second as the goal.
inline pair& with_greedy_decode_buffers(pair& p) {
  const auto weights = [](const workload& w) { return config_of(w.get("model")).parameters(); };
  return p.on(backend::cuda)
      .input("weights", dtype::bf16, weights)
      .input("prompt", dtype::f32, std::vector<std::string>{"batch", "prompt"}, init_distribution::uniform_unit)
      .output("tokens", dtype::i32, {"batch", "new_tokens"})
      .work(greedy_decode_work)
      .sequential_passes([](const workload& w) { return static_cast<double>(w.get("new_tokens")); },
                         "each token needs the previous one, so every step reads the weights again")
      .pursue(goal::throughput)
      .items_per_call("tokens", [](const workload& w) { return static_cast<double>(w.get("batch") * w.get("new_tokens")); });
}

// The contract of the plain greedy-decoding pairs; the validation sizes cover one and several
// sequences, one-token prompts, odd lengths and both small models.
inline pair& with_greedy_decode_contract(pair& p) {
  return with_greedy_decode_buffers(p)
      .reference(greedy_tokens_reference)
      .validation_size({{"model", 0}, {"batch", 1}, {"prompt", 1}, {"new_tokens", 7}})
      .validation_size({{"model", 0}, {"batch", 3}, {"prompt", 5}, {"new_tokens", 9}})
      .validation_size({{"model", 1}, {"batch", 2}, {"prompt", 7}, {"new_tokens", 33}})
      .held_out_size({{"model", 1}, {"batch", 2}, {"prompt", 11}, {"new_tokens", 17}});
}

}  // namespace aisp::decode
