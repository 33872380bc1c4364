// paged_kv_cache: continuous batching of a seeded trace with the 1B model (serving_pair_parts.cuh)
// from one fixed KV-cache memory, `kv_pages` pages of `page` positions (kv_pages.hpp). The
// baseline allocates contiguously per sequence: each admitted request reserves a slab for the
// longest sequence the server may see (prompt_max + output_max), since its output length is
// unknown, so the memory holds kv_pages / slab sequences at once. The optimized variant (as vLLM's
// PagedAttention) gives a sequence a page wherever one is free when its next position needs it,
// so the same memory holds as many sequences as their actual lengths allow, up to `slots`; where
// the pages run out, the sequence admitted last is preempted and later recomputes its prefix.
// Both run the same kernels (Note [paged cache]: K and V found through a block table), so the
// difference is the allocation alone. Each launch records the sequences the cache holds and the
// positions reserved without a token (`sequences`, `kv_unused_tokens`): the memory each wastes and
// the batch it then fits. Every request's greedy tokens are checked against the fp64 reference
// and the baseline's, bit for bit: a recomputed prefix gives the cached one's bits (Note
// [batch-invariant rows]), and the validation sizes preempt.
// Measured: docs/results/issue21.md (H200, 2026-11-29: 1.44x the tokens a second of the slabs), then labs/decode/README.md.
// Run: aisp bench run --targets labs/decode:paged_kv_cache
#include "aisp/pair_kit.hpp"
#include "serving_pair_parts.cuh"

namespace aisp::decode {
namespace {

struct paged_serving_variant {
  paged_serving_variant(const workload& w, kv_allocation how)
      : state(w, pool_of(w, how).slots(), paged_layout{static_cast<int>(w.get("kv_pages")), static_cast<int>(w.get("page"))}),
        scheduler(state.shapes(), pool_of(w, how)) {}
  serving_state state;
  serving_scheduler scheduler;
};

template <kv_allocation How>
void setup_paged(run_context& ctx) {
  make_state<paged_serving_variant>(ctx, ctx.work(), How);
}

[[nodiscard]] pair paged_kv_cache_pair() {
  pair declared("labs/decode:paged_kv_cache");
  with_serving_contract(declared)
      .summary("serving a Poisson trace of 48 requests with the 1B model from 64 KV pages of 16 positions: a contiguous slab "
               "a sequence (6 fit) against pages on demand (up to 12 sequences)")
      .benchmark_size({{"model", 2}, {"requests", 48}, {"rate", 400}, {"prompt_max", 32}, {"output_max", 128}, {"slots", 12},
                       {"step_us", 1000}, {"kv_pages", 64}, {"page", 16}})
      .validation_size({{"model", 0}, {"requests", 1}, {"rate", 1000}, {"prompt_max", 4}, {"output_max", 5}, {"slots", 2},
                        {"step_us", 50}, {"kv_pages", 5}, {"page", 2}})
      // These three preempt (the host model of the schedule: tests/unit/kv_pages_test.cpp).
      .validation_size({{"model", 0}, {"requests", 7}, {"rate", 50000}, {"prompt_max", 6}, {"output_max", 12}, {"slots", 4},
                        {"step_us", 50}, {"kv_pages", 8}, {"page", 4}})
      .validation_size({{"model", 1}, {"requests", 5}, {"rate", 50000}, {"prompt_max", 9}, {"output_max", 33}, {"slots", 3},
                        {"step_us", 50}, {"kv_pages", 16}, {"page", 4}})
      .held_out_size({{"model", 1}, {"requests", 6}, {"rate", 50000}, {"prompt_max", 7}, {"output_max", 21}, {"slots", 4},
                      {"step_us", 50}, {"kv_pages", 12}, {"page", 4}})
      .add_variant(decoder_variant("baseline",
                                   "contiguous allocation: an admitted request reserves a slab of prompt_max + output_max positions, "
                                   "so the pool holds kv_pages / slab sequences; continuous batching in those slots",
                                   serve_variant<paged_serving_variant>, setup_paged<kv_allocation::slabs>,
                                   release_state<paged_serving_variant>))
      .add_variant(decoder_variant("optimized",
                                   "paged allocation: a sequence takes a free page when its next position needs one, up to `slots` "
                                   "sequences; when the pages run out the one admitted last is preempted and recomputes later",
                                   serve_variant<paged_serving_variant>, setup_paged<kv_allocation::pages_on_demand>,
                                   release_state<paged_serving_variant>));
  return declared;
}

}  // namespace
}  // namespace aisp::decode

AISP_REGISTER(aisp::decode::paged_kv_cache_pair());
