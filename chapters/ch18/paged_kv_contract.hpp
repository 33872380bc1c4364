// What the ch18 decode pairs over a paged KV cache share (paged_decode.cu, gqa_repeat_kv.cu):
// the problem read from the pair's buffers, the buffers and work, the fp64 reference through the
// page table, the tolerance, and the split-K variant's scratch. Kernels: paged_decode_kernels.cuh.
#pragma once

#include <cuda_bf16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "aisp/attention_reference.hpp"
#include "aisp/check.hpp"
#include "aisp/device_scratch.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "paged_decode_kernels.cuh"

namespace aisp::ch18 {
namespace {  // as paged_decode_kernels.cuh: each pair file has its own copy

// Note [decode tolerance]: inputs are bf16 values in [-1, 1), exact in the fp64 reference.
// The SIMT variants keep scores, probabilities and sums in fp32 (no bf16 P, unlike the prefill
// lab), so before the output's rounding they agree with fp64 to ~1e-6 relative; __expf adds
// ~2 ulp. paged_decode's optimized gives P to the tensor cores as two bf16 halves (16 bits
// of mantissa): a single bf16 P would not fit this tolerance (Note [P in two bf16 halves]).
// The bf16 output: 2^-8 relative against fp64, and two variants' roundings of nearly equal fp32
// values can differ by one ulp (2^-7): rtol 1e-2. An output is a weighted mean of 8192 values
// in [-1, 1), |o| ~ 0.006; atol 1e-4 is above the fp32 summation noise (~1e-7) and under 2% of
// a typical output. rel-L2: the dtype default.
[[nodiscard]] decode_problem problem_of(run_context& ctx) {
  decode_problem p;
  p.q = ctx.as<const __nv_bfloat16>("q");
  p.k_cache = ctx.as<const __nv_bfloat16>("k_cache");
  p.v_cache = ctx.as<const __nv_bfloat16>("v_cache");
  p.page_table = ctx.as<const std::int32_t>("page_table");
  p.o = ctx.as<__nv_bfloat16>("o");
  p.batch = static_cast<int>(ctx.param("b"));
  p.kv_heads = static_cast<int>(ctx.param("hkv"));
  p.group = static_cast<int>(ctx.param("group"));
  p.pages = static_cast<int>(ctx.param("pages"));
  p.page = static_cast<int>(ctx.param("page"));
  AISP_EXPECTS(ctx.param("d") == head_dim, "the ch18 decode kernels take head dim 128");
  p.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  return p;
}

// The split kernel's partial softmaxes: (b, h, splits) records of 128 values, a max and a sum.
void setup_split(run_context& ctx) {
  const auto p = problem_of(ctx);
  const std::size_t records = static_cast<std::size_t>(p.batch) * p.heads() * splits_of(p);
  make_state<device_scratch>(ctx, records * (head_dim + 2) * sizeof(float));
}
void run_split(run_context& ctx) {
  launch_decode_split(problem_of(ctx), static_cast<float*>(state_of<device_scratch>(ctx).data()), ctx.stream());
}
void teardown_split(run_context& ctx) { release_state<device_scratch>(ctx); }

void decode_reference(reference_io& io) {
  const auto batch = static_cast<std::size_t>(io.param("b"));
  const auto kv_heads = static_cast<std::size_t>(io.param("hkv"));
  const auto group = static_cast<std::size_t>(io.param("group"));
  const auto pages = static_cast<std::size_t>(io.param("pages"));
  const auto page = static_cast<std::size_t>(io.param("page"));
  const std::size_t dim = head_dim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dim));
  const std::span<const double> q = io.input("q");
  const std::span<const double> k = io.input("k_cache");
  const std::span<const double> v = io.input("v_cache");
  const std::span<const double> table = io.input("page_table");
  const std::span<double> o = io.output("o");
  const std::size_t tokens = pages * page;
  std::vector<double> weights;
  const auto row = [&](std::size_t sequence, std::size_t kv_head, std::size_t token) {
    const auto physical = static_cast<std::size_t>(table[sequence * pages + token / page]);
    return ((physical * kv_heads + kv_head) * page + token % page) * dim;
  };
  for (std::size_t s = 0; s < batch; ++s) {
    for (std::size_t h = 0; h < kv_heads * group; ++h) {
      const std::size_t at = (s * kv_heads * group + h) * dim;
      attention_row_reference(
          &q[at], tokens, dim, scale, [&](std::size_t t) { return &k[row(s, h / group, t)]; },
          [&](std::size_t t) { return &v[row(s, h / group, t)]; }, weights, &o[at]);
    }
  }
}

// A size of the decode pairs: 4 query heads per KV head, 64-token pages, head dim 128.
[[nodiscard]] param_map paged_kv_size(std::int64_t batch, std::int64_t kv_heads, std::int64_t pages) {
  return param_map{{"b", batch}, {"hkv", kv_heads}, {"group", 4}, {"pages", pages}, {"page", 64}, {"d", head_dim}};
}

// The split-K, GQA-sharing decode (Note [split decode]) as a variant; `run` launches it (on the
// bf16 cache unless told otherwise) with the scratch setup() made.
[[nodiscard]] variant split_decode_variant(std::string name, std::string summary, stage_fn run = run_split) {
  return kit::with_state(std::move(name), std::move(summary), std::move(run), setup_split, teardown_split);
}

// The fewest bytes a decode step moves: K and V once at `cache_value_bytes` a value, q and o in
// bf16, the page table; and 4 FLOPs a (query head, token, dim): the two dot products.
[[nodiscard]] work_fn paged_kv_work(double cache_value_bytes) {
  return [cache_value_bytes](const workload& w) {
    const auto b = static_cast<double>(w.get("b"));
    const auto hkv = static_cast<double>(w.get("hkv"));
    const auto h = hkv * static_cast<double>(w.get("group"));
    const auto tokens = static_cast<double>(w.get("pages") * w.get("page"));
    const auto d = static_cast<double>(w.get("d"));
    return work_amount{.bytes = cache_value_bytes * 2 * b * hkv * tokens * d + 2.0 * 2 * b * h * d +
                                4.0 * b * static_cast<double>(w.get("pages")),
                       .flops = 4.0 * b * h * tokens * d};
  };
}

// The small sizes, the buffers (q, a paged K and V cache, a permuted page table, o), the work,
// the reference and the tolerance; the pair adds its benchmark size (paged_kv_size) and variants.
pair& with_paged_kv_contract(pair& declared) {
  return declared
      // One page (one split), 3 pages, 9 pages (a second split of one page), and the held-out 17
      // (three splits, the last of one page); 1-3 sequences and 1-2 KV heads.
      .validation_size(paged_kv_size(1, 1, 1))
      .validation_size(paged_kv_size(2, 1, 3))
      .validation_size(paged_kv_size(1, 2, 9))
      .held_out_size(paged_kv_size(3, 2, 17))
      .input("q", dtype::bf16, {"b", "hkv", "group", "d"})
      .input("k_cache", dtype::bf16, {"b", "pages", "hkv", "page", "d"}, init_distribution::uniform_signed, buffer_meaning::kv_cache)
      .input("v_cache", dtype::bf16, {"b", "pages", "hkv", "page", "d"}, init_distribution::uniform_signed, buffer_meaning::kv_cache)
      // A permutation of the pool's pages: every page belongs to exactly one sequence, at random.
      .input("page_table", dtype::i32, {"b", "pages"}, init_distribution::index_permutation)
      .output("o", dtype::bf16, {"b", "hkv", "group", "d"})
      .work(paged_kv_work(2.0))  // bf16 caches
      .reference(decode_reference)
      .tolerance_override(tolerance{
          .rtol = 1e-2,
          .atol = 1e-4,
          .max_rel_l2 = 1e-2,
          .reason = "bf16 output: one ulp (2^-7) between two variants' roundings -> rtol 1e-2; fp32 softmax and sums, "
                    "|o| ~ 0.006: atol 1e-4 above fp32 noise, under 2% of an output (Note [decode tolerance])"})
      .tag("attention")
      .tag("decode")
      .tag("paged-kv-cache");
}

}  // namespace
}  // namespace aisp::ch18
