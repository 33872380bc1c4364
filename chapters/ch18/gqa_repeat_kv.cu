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
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "paged_kv_contract.hpp"

namespace aisp::ch18 {
namespace {

// The baseline's scratch: the repeated caches, an identity page table over them, the partials.
struct repeated_cache {
  __nv_bfloat16* k = nullptr;
  __nv_bfloat16* v = nullptr;
  std::int32_t* identity = nullptr;
  float* partials = nullptr;
  repeated_cache() = default;
  repeated_cache(const repeated_cache&) = delete;
  repeated_cache& operator=(const repeated_cache&) = delete;
  ~repeated_cache() {
    for (void* memory : {static_cast<void*>(k), static_cast<void*>(v), static_cast<void*>(identity), static_cast<void*>(partials)})
      if (memory != nullptr) static_cast<void>(cudaFree(memory));
  }
};

void setup_repeat(run_context& ctx) {
  const auto p = problem_of(ctx);
  auto& state = make_state<repeated_cache>(ctx);
  const std::size_t pages = static_cast<std::size_t>(p.batch) * p.pages;
  const std::size_t values = pages * p.heads() * p.page * head_dim;
  AISP_CUDA_CHECK(cudaMalloc(&state.k, values * sizeof(__nv_bfloat16)));
  AISP_CUDA_CHECK(cudaMalloc(&state.v, values * sizeof(__nv_bfloat16)));
  AISP_CUDA_CHECK(cudaMalloc(&state.identity, pages * sizeof(std::int32_t)));
  std::vector<std::int32_t> identity(pages);
  std::iota(identity.begin(), identity.end(), 0);  // the repeated cache is in sequence order
  AISP_CUDA_CHECK(cudaMemcpy(state.identity, identity.data(), pages * sizeof(std::int32_t), cudaMemcpyHostToDevice));
  const std::size_t records = static_cast<std::size_t>(p.batch) * p.heads() * splits_of(p);
  AISP_CUDA_CHECK(cudaMalloc(&state.partials, records * (head_dim + 2) * sizeof(float)));
}

void run_repeat(run_context& ctx) {
  const auto p = problem_of(ctx);
  const auto& state = state_of<repeated_cache>(ctx);
  const std::size_t chunks = static_cast<std::size_t>(p.batch) * p.pages * p.heads() * p.page * (head_dim / 8);
  repeat_kv<<<static_cast<unsigned>((chunks + 255) / 256), 256, 0, ctx.stream()>>>(p, state.k, state.v);
  AISP_CHECK_LAUNCH();
  decode_problem repeated = p;
  repeated.k_cache = state.k;
  repeated.v_cache = state.v;
  repeated.page_table = state.identity;
  repeated.kv_heads = p.heads();
  repeated.group = 1;
  launch_decode_split(repeated, state.partials, ctx.stream());
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
