// varlen_prefill: causal prefill of a batch of sequences of different lengths, as a serving
// engine batches prompts: b 8 sequences of 4096, 3584, ..., 512 tokens (18432 in all), h 16,
// d 128, bf16. The sequences arrive packed: each head's tokens of all sequences back to back.
// Baseline: pad to the longest: copy into (b, h, 4096, d) with zero padding, run labs/attention's
// fused kernel over every padded row with the keys past each length masked, copy the real rows
// back. Optimized: the same kernel reads the packed layout through the sequences' offsets
// (cu_seqlens) and skips blocks past a sequence's end (Note [variable lengths] in
// labs/attention/fused_mma.cuh).
// Why faster: the causal work of the padded batch is 8 x 4096^2 / 2 scores, of the packed one
// sum(len^2) / 2, 40% of it here; and no pad and unpad copies.
// Run: aisp bench run --targets ch18:varlen_prefill
#include <cuda_bf16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "../../labs/attention/attention_pair_parts.hpp"
#include "../../labs/attention/fused_mma.cuh"  // the lab's kernel, with its offsets option
#include "aisp/attention_reference.hpp"
#include "aisp/check.hpp"
#include "aisp/device_scratch.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::ch18 {
namespace {

using labs_attention::attention_problem;
constexpr int dim = 128;

// Sequence i of b has ceil(s (b - i) / b) tokens: the longest is s, the shortest s / b.
[[nodiscard]] std::vector<int> offsets_of(std::int64_t batch, std::int64_t longest) {
  std::vector<int> offsets{0};
  for (std::int64_t i = 0; i < batch; ++i)
    offsets.push_back(offsets.back() + static_cast<int>((longest * (batch - i) + batch - 1) / batch));
  return offsets;
}

[[nodiscard]] std::int64_t total_of(const workload& w) { return offsets_of(w.get("b"), w.get("s")).back(); }

// What both variants keep from setup: the offsets on the device and the packed token count (run()
// allocates nothing, M4); the baseline also its padded copies of q, k, v and o.
struct varlen_state {
  explicit varlen_state(const std::vector<int>& host_offsets)
      : offsets(host_offsets.size() * sizeof(int)), total(host_offsets.back()) {}
  device_scratch offsets;
  int total;
  std::vector<std::unique_ptr<device_scratch>> padded;  // q, k, v, o as (b, h, s, d); the baseline's only
  [[nodiscard]] __nv_bfloat16* padded_buffer(std::size_t i) const { return static_cast<__nv_bfloat16*>(padded.at(i)->data()); }
};

[[nodiscard]] attention_problem packed_problem(run_context& ctx, const varlen_state& state) {
  attention_problem p = labs_attention::with_attention_buffers(ctx);
  p.batch = static_cast<int>(ctx.param("b"));
  p.kv_heads = static_cast<int>(ctx.param("h"));
  p.group = 1;
  p.seq = static_cast<int>(ctx.param("s"));
  p.dim = dim;
  p.causal = true;
  p.offsets = static_cast<const int*>(state.offsets.data());
  p.packed = true;
  p.total = state.total;
  p.scale = 1.0f / std::sqrt(static_cast<float>(dim));
  AISP_EXPECTS(ctx.param("d") == dim, "ch18:varlen_prefill takes head dim 128");
  return p;
}

void setup_offsets(run_context& ctx, bool padded) {
  labs_attention::prepare_fused_attention<dim>();
  const auto offsets = offsets_of(ctx.param("b"), ctx.param("s"));
  auto& state = make_state<varlen_state>(ctx, offsets);
  AISP_CUDA_CHECK(cudaMemcpy(state.offsets.data(), offsets.data(), offsets.size() * sizeof(int), cudaMemcpyHostToDevice));
  if (!padded) return;
  const auto values = static_cast<std::size_t>(ctx.param("b") * ctx.param("h") * ctx.param("s") * dim);
  for (int i = 0; i < 4; ++i) state.padded.push_back(std::make_unique<device_scratch>(values * sizeof(__nv_bfloat16)));
}
void setup_padded(run_context& ctx) { setup_offsets(ctx, true); }
void setup_packed(run_context& ctx) { setup_offsets(ctx, false); }
void teardown(run_context& ctx) { release_state<varlen_state>(ctx); }

// Between packed (h, total, d) and padded (b, h, s, d), one thread per 16-byte chunk of the padded
// layout: `to_padded` copies a token in (zeros past the sequence's end), else copies a real row out.
__global__ void repack(const attention_problem p, __nv_bfloat16* padded, const __nv_bfloat16* packed_in,
                       __nv_bfloat16* packed_out, bool to_padded) {
  constexpr int chunks_per_row = dim / 8;
  const std::size_t chunk = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (chunk >= static_cast<std::size_t>(p.batch) * p.heads() * p.seq * chunks_per_row) return;
  const int column = static_cast<int>(chunk % chunks_per_row) * 8;
  const std::size_t row = chunk / chunks_per_row;  // (batch, head, token) of the padded layout
  const int token = static_cast<int>(row % p.seq);
  const int head = static_cast<int>((row / p.seq) % p.heads());
  const int batch = static_cast<int>(row / p.seq / p.heads());
  const int start = p.offsets[batch];
  const bool real = token < p.offsets[batch + 1] - start;
  const std::size_t packed_at = (static_cast<std::size_t>(head) * p.total + start + token) * dim + column;
  auto* padded_chunk = reinterpret_cast<uint4*>(padded + row * dim + column);
  if (to_padded) {
    *padded_chunk = real ? *reinterpret_cast<const uint4*>(packed_in + packed_at) : make_uint4(0U, 0U, 0U, 0U);
  } else if (real) {
    *reinterpret_cast<uint4*>(packed_out + packed_at) = *padded_chunk;
  }
}

void run_padded(run_context& ctx) {
  const auto& state = state_of<varlen_state>(ctx);
  const attention_problem packed = packed_problem(ctx, state);
  const std::size_t chunks = static_cast<std::size_t>(packed.batch) * packed.heads() * packed.seq * (dim / 8);
  const auto blocks = static_cast<unsigned>((chunks + 255) / 256);
  const __nv_bfloat16* sources[3] = {packed.q, packed.k, packed.v};
  for (int i = 0; i < 3; ++i) {
    repack<<<blocks, 256, 0, ctx.stream()>>>(packed, state.padded_buffer(i), sources[i], nullptr, true);
    AISP_CHECK_LAUNCH();
  }
  attention_problem padded = packed;
  padded.q = state.padded_buffer(0);
  padded.k = state.padded_buffer(1);
  padded.v = state.padded_buffer(2);
  padded.o = state.padded_buffer(3);
  padded.packed = false;  // keys masked past each length; every padded query row computed
  labs_attention::launch_fused_attention<dim>(padded, ctx.stream());
  repack<<<blocks, 256, 0, ctx.stream()>>>(packed, state.padded_buffer(3), nullptr, packed.o, false);
  AISP_CHECK_LAUNCH();
}

void run_packed(run_context& ctx) {
  labs_attention::launch_fused_attention<dim>(packed_problem(ctx, state_of<varlen_state>(ctx)), ctx.stream());
}

void varlen_reference(reference_io& io) {
  const auto heads = static_cast<std::size_t>(io.param("h"));
  const auto offsets = offsets_of(io.param("b"), io.param("s"));
  const auto total = static_cast<std::size_t>(offsets.back());
  const labs_attention::attention_io buffers(io);
  const auto& [q, k, v, o, scale] = buffers;
  std::vector<double> weights;
  for (std::size_t head = 0; head < heads; ++head) {
    for (std::size_t b = 0; b + 1 < offsets.size(); ++b) {
      const auto start = head * total + static_cast<std::size_t>(offsets[b]);
      for (std::size_t i = 0; i < static_cast<std::size_t>(offsets[b + 1] - offsets[b]); ++i) {
        attention_row_reference(
            &q[(start + i) * dim], i + 1, dim, scale, [&](std::size_t j) { return &k[(start + j) * dim]; },
            [&](std::size_t j) { return &v[(start + j) * dim]; }, weights, &o[(start + i) * dim]);
      }
    }
  }
}

[[nodiscard]] pair varlen_prefill_pair() {
  const auto size = [](std::int64_t batch, std::int64_t heads, std::int64_t longest) {
    return param_map{{"b", batch}, {"h", heads}, {"s", longest}, {"d", dim}};
  };
  const auto packed_values = [](const workload& w) { return w.get("h") * total_of(w) * w.get("d"); };
  variant baseline = kit::with_state("baseline", "pad to the longest: copy into (b, h, s, d) with zeros, the fused kernel over every "
                                                 "padded row with keys past each length masked, copy the real rows back",
                                     run_padded, setup_padded, teardown);
  variant optimized = kit::with_state("optimized", "packed: the fused kernel reads each sequence through its offsets "
                                                   "(cu_seqlens) and skips blocks past its end",
                                      run_packed, setup_packed, teardown);
  baseline.math = optimized.math = math_unit::bf16_tensor;
  return pair("ch18:varlen_prefill")
      .summary("causal prefill of 8 sequences of 512-4096 tokens (18432), h 16, d 128, bf16: padded against packed")
      .needs_compute_capability(9, 0, "built for sm_90a")
      .benchmark_size(size(8, 16, 4096))
      // Lengths 1; 7 and 4; 65, 44 and 22; 130 and 65 (ragged tiles everywhere); held out 257, 172, 86.
      .validation_size(size(1, 1, 1))
      .validation_size(size(2, 1, 7))
      .validation_size(size(3, 2, 65))
      .validation_size(size(2, 1, 130))
      .held_out_size(size(3, 2, 257))
      .input("q", dtype::bf16, packed_values)
      .input("k", dtype::bf16, packed_values)
      .input("v", dtype::bf16, packed_values)
      .output("o", dtype::bf16, packed_values)
      .work([](const workload& w) {
        const auto offsets = offsets_of(w.get("b"), w.get("s"));
        double scored = 0;
        for (std::size_t b = 0; b + 1 < offsets.size(); ++b) {
          const double length = offsets[b + 1] - offsets[b];
          scored += length * (length + 1) / 2;  // causal
        }
        const auto h = static_cast<double>(w.get("h"));
        const auto d = static_cast<double>(w.get("d"));
        return work_amount{.bytes = 2.0 * 4 * h * offsets.back() * d, .flops = 4.0 * h * d * scored};
      })
      .reference(varlen_reference)
      .tolerance_override(labs_attention::attention_tolerance())
      .tag("attention")
      .tag("varlen")
      .tag("tensor-cores")
      .add_variant(baseline)
      .add_variant(optimized);
}

}  // namespace
}  // namespace aisp::ch18

AISP_REGISTER(aisp::ch18::varlen_prefill_pair());
