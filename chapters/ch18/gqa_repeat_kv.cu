// gqa_repeat_kv: grouped-query decode without and with a GQA-aware kernel. 32 sequences x 4096
// cached tokens, 32 query heads on 8 KV heads, d 128, bf16, in a paged cache (as ch18:paged_decode).
// Baseline: HF transformers' repeat_kv: each query head's copy of its KV head's cache is written
// out (4x the cache, 2.15 GB), then the split-K decode kernel runs with groups of one over it.
// Optimized: the same split-K kernel with groups of four: one block per KV head serves its 4 query
// heads straight from the shared cache.
// Why faster: the repeat reads the cache once and writes it four times, and the decode then reads
// the four copies: ~4.8 GB of HBM traffic a step against the 0.54 GB the shared kernel reads.
// The two variants differ in the repeat alone (Note [split decode] in paged_decode_kernels.cuh).
// Run: aisp bench run --targets ch18:gqa_repeat_kv
#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "aisp/check.hpp"
#include "aisp/device_scratch.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "paged_kv_contract.hpp"

namespace aisp::ch18 {
namespace {

// The baseline's scratch: the repeated caches, an identity page table over them, the partials.
struct repeated_cache {
  repeated_cache(std::size_t values, std::size_t pages, std::size_t records)
      : k(values * sizeof(__nv_bfloat16)), v(values * sizeof(__nv_bfloat16)), identity(pages * sizeof(std::int32_t)),
        partials(records * (head_dim + 2) * sizeof(float)) {}
  device_scratch k, v, identity, partials;
};

void setup_repeat(run_context& ctx) {
  const auto p = problem_of(ctx);
  const std::size_t pages = static_cast<std::size_t>(p.batch) * p.pages;
  auto& state = make_state<repeated_cache>(ctx, pages * p.heads() * p.page * head_dim, pages,
                                           static_cast<std::size_t>(p.batch) * p.heads() * splits_of(p));
  std::vector<std::int32_t> identity(pages);
  std::iota(identity.begin(), identity.end(), 0);  // the repeated cache is in sequence order
  AISP_CUDA_CHECK(cudaMemcpy(state.identity.data(), identity.data(), pages * sizeof(std::int32_t), cudaMemcpyHostToDevice));
}

void run_repeat(run_context& ctx) {
  const auto p = problem_of(ctx);
  const auto& state = state_of<repeated_cache>(ctx);
  auto* const k = static_cast<__nv_bfloat16*>(state.k.data());
  auto* const v = static_cast<__nv_bfloat16*>(state.v.data());
  const std::size_t chunks = static_cast<std::size_t>(p.batch) * p.pages * p.heads() * p.page * (head_dim / 8);
  repeat_kv<<<static_cast<unsigned>((chunks + 255) / 256), 256, 0, ctx.stream()>>>(p, k, v);
  AISP_CHECK_LAUNCH();
  decode_problem repeated = p;
  repeated.k_cache = k;
  repeated.v_cache = v;
  repeated.page_table = static_cast<const std::int32_t*>(state.identity.data());
  repeated.kv_heads = p.heads();
  repeated.group = 1;
  launch_decode_split(repeated, static_cast<float*>(state.partials.data()), ctx.stream());
}

void teardown_repeat(run_context& ctx) { release_state<repeated_cache>(ctx); }

[[nodiscard]] pair gqa_repeat_kv_pair() {
  const variant baseline = kit::with_state("baseline",
                                           "repeat_kv: each query head's copy of its KV head's cache written out (4x), then "
                                           "the split-K decode with groups of one",
                                           run_repeat, setup_repeat, teardown_repeat);
  pair declared = pair("ch18:gqa_repeat_kv");
  with_paged_kv_contract(declared)
      .summary("GQA decode, 32 query / 8 KV heads, 32 sequences x 4096 tokens: repeat_kv copies against a kernel that shares")
      .benchmark_size(paged_kv_size(32, 8, 64))
      .tag("gqa")
      .add_variant(baseline)
      .add_variant(split_decode_variant("optimized", "the same split-K decode with groups of four: one block per KV head "
                                                     "reads the shared cache once for its 4 query heads"));
  return declared;
}

}  // namespace
}  // namespace aisp::ch18

AISP_REGISTER(aisp::ch18::gqa_repeat_kv_pair());
