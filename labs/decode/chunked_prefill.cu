// chunked_prefill: continuous batching of a seeded trace with the 1B model (serving_pair_parts.cuh),
// whose prefill launches stall every running decode (the baseline), against chunked prefill (as
// Sarathi-Serve and vLLM): every launch carries each running request's decode row and fills up to
// `chunk` rows with prompt chunks, in order of admission (serving_scheduler.hpp).
// Why: a 128-token prompt is 8 weight passes, and a decode that waits for it (or for several
// admitted at once) makes a long gap between two of its tokens; a launch of 32 rows is 2 passes
// at most, so no decode waits longer. The pair is judged by what it is for, each request's time
// per output token at p99 (Note [judged by a recorded metric]); the throughput and the TTFT are
// reported beside it. Every request's greedy tokens are checked against the fp64 reference and
// the baseline's, bit for bit (Note [batch-invariant rows]): a chunk's rows give the tokens the
// whole prompt gives. The pair declares the TTFT it trades (at most 3x the baseline's worst).
// H200 (2026-11-29): see README.
// Run: aisp bench run --targets labs/decode:chunked_prefill
#include "aisp/pair_kit.hpp"
#include "serving_pair_parts.cuh"

namespace aisp::decode {
namespace {

[[nodiscard]] pair chunked_prefill_pair() {
  pair declared("labs/decode:chunked_prefill");
  with_serving_contract(declared)
      .summary("serving a Poisson trace of 16 requests with prompts up to 128 tokens in 8 slots: prefill that stalls the decodes "
               "against chunks of 32 rows mixed with them")
      .benchmark_size({{"model", 2}, {"requests", 16}, {"rate", 40}, {"prompt_max", 128}, {"output_max", 64}, {"slots", 8},
                       {"step_us", 1000}, {"chunk", 32}})
      .validation_size({{"model", 0}, {"requests", 1}, {"rate", 1000}, {"prompt_max", 9}, {"output_max", 5}, {"slots", 1},
                        {"step_us", 50}, {"chunk", 2}})
      .validation_size({{"model", 0}, {"requests", 7}, {"rate", 2000}, {"prompt_max", 13}, {"output_max", 12}, {"slots", 3},
                        {"step_us", 50}, {"chunk", 5}})
      .validation_size({{"model", 1}, {"requests", 5}, {"rate", 1000}, {"prompt_max", 17}, {"output_max", 33}, {"slots", 2},
                        {"step_us", 50}, {"chunk", 4}})
      .held_out_size({{"model", 1}, {"requests", 4}, {"rate", 1500}, {"prompt_max", 15}, {"output_max", 21}, {"slots", 2},
                      {"step_us", 50}, {"chunk", 7}})
      .judge_by_recorded("tpot_s", 0.99, "chunked prefill is for the decodes a prompt's prefill would stall: their time per output token")
      // Note [declared latency trade]: a 128-token prompt beside 7 decodes is 6 launches of 32 rows
      // instead of one: off the queue its first token came 1.8x later than whole-prompt prefill's
      // worst (H200, 2026-12-02); W12 at 1.5x took that for starvation, or not, as the baseline's
      // own TTFT tail moved (4x between runs).
      .trades_latency("ttft_s", 3.0, "chunks spread a long prompt's prefill over launches of `chunk` rows: its first token comes "
                                     "later, every running decode's next token sooner")
      .add_variant(decoder_variant("baseline",
                                   "continuous batching: arrived requests take free slots and their whole prompts are prefilled in "
                                   "one launch, while every running decode waits",
                                   run_serving, setup_serving<batching::continuous>, release_state<serving_variant>))
      .add_variant(decoder_variant("optimized",
                                   "chunked prefill: every launch runs each decode row and fills up to `chunk` rows with the "
                                   "prompts' next positions, in order of admission",
                                   run_serving, setup_serving<batching::continuous, true>, release_state<serving_variant>));
  return declared;
}

}  // namespace
}  // namespace aisp::decode

AISP_REGISTER(aisp::decode::chunked_prefill_pair());
