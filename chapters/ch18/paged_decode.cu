// paged_decode: one decode step of attention over a paged KV cache, as a serving engine runs it.
// b = 64 sequences of 8192 cached tokens in pages of 64, 32 query heads on 8 KV heads (GQA),
// d = 128, bf16 cache, fp32 softmax. A page table scatters each sequence's pages over the pool.
// Baseline: one block per (sequence, query head) walks the sequence's pages; each query head
// reads its KV head's cache again (four times in all, L2 permitting), a warp holds one token in
// flight at a time, 8 bytes a lane.
// optimized_split: split-K over the pages (flash-decoding) with a combine kernel; one block serves
// all four query heads of a KV head, so each cache byte is read once; 16-byte loads, sixteen
// tokens in flight a block (Note [split decode] in paged_decode_kernels.cuh).
// Optimized: the same split-K grid with both dot products over the query group on the tensor
// cores (mma.sync, K and V pages through a 3-stage cp.async ring, the softmax once per 16 tokens):
// ~6x fewer instructions a token (Note [decode mma tiles] in decode_mma_kernels.cuh).
// Why faster: the work is the KV bytes (2.15 GB a step, ~720 us at 3.0 TB/s), and both changes
// cut the time per byte: a quarter of the L2 and HBM reads, and more bytes in flight per SM.
// The mma step then cuts the instructions per byte, and keeps 64 KB in flight a block.
// Target (issue 18): at least 85% of the measured copy ceiling on the KV bytes. H100: README.md.
// Run: aisp bench run --targets ch18:paged_decode
#include <cstdint>

#include "aisp/device_scratch.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "decode_mma_variant.hpp"
#include "paged_kv_contract.hpp"

namespace aisp::ch18 {
namespace {

void run_per_head(run_context& ctx) { launch_decode_per_head(problem_of(ctx), ctx.stream()); }

[[nodiscard]] pair paged_decode_pair() {
  const variant baseline = kit::with_state("baseline",
                                           "one block per (sequence, query head) walks the page table; a warp per token, 8 "
                                           "bytes a lane, online softmax per warp, the four warps merged at the end",
                                           run_per_head, {}, {});
  const variant optimized_split = split_decode_variant(
      "optimized_split", "split-K over the pages (8 a split) with a combine kernel; one block per KV head serves its 4 query "
                   "heads; two tokens a half-warp per step, 16-byte loads, four loads in flight before use");
  // Against optimized_split: the dot products on the tensor cores, pages staged through shared memory.
  const variant optimized = tensor_core_decode_variant(
      "optimized",
      "the same split-K grid; S^T = K Q^T and O^T += V^T P^T on mma.sync over the 4 query heads (P as two bf16 halves), "
      "K and V pages in a 3-stage cp.async ring, softmax once per 16 tokens");
  pair declared = pair("ch18:paged_decode");
  with_paged_kv_contract(declared)
      .summary("decode attention over a paged KV cache: 64 sequences x 8192 tokens, 32 query / 8 KV heads, d 128, bf16")
      .benchmark_size(paged_kv_size(64, 8, 128))
      .tag("split-k")
      .add_variant(baseline)
      .add_variant(optimized_split)
      .add_variant(optimized);
  return declared;
}

}  // namespace
}  // namespace aisp::ch18

AISP_REGISTER(aisp::ch18::paged_decode_pair());
