// gpu_decoder's one compiled unit (Note [one decoder unit] in gpu_decoder.cuh): the only unit that
// includes labs/decode's kernels. Not a pair: CMakeLists.txt builds it as aisp_decode_model.
#include "gpu_decoder.cuh"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "aisp/check.hpp"
#include "decoder_kernels.cuh"
#include "matvec_launch.cuh"
#include "timing_switches.hpp"

namespace aisp::decode {
namespace {

template <class Cache>
void allow_attention_shared_bytes(int bytes) {
  for (const auto kernel :
       {attention_rows_kernel<Cache, true, 2>, attention_rows_kernel<Cache, false, 2>, attention_rows_kernel<Cache, false, 2, attention_narrow_threads>,
        attention_rows_kernel<Cache, true, 4>, attention_rows_kernel<Cache, false, 4>, attention_rows_kernel<Cache, false, 4, attention_narrow_threads>,
        attention_rows_kernel<Cache, false, 2, attention_threads, true>, attention_rows_kernel<Cache, false, 2, attention_narrow_threads, true>,
        attention_rows_kernel<Cache, false, 4, attention_threads, true>, attention_rows_kernel<Cache, false, 4, attention_narrow_threads, true>})
    AISP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

}  // namespace

gpu_decoder::gpu_decoder(const decoder_config& config, int max_rows, int slots, int max_len, std::optional<paged_layout> paged)
    : c_(config),
      dims_{config.d_model, config.heads, config.kv_heads, config.head_dim, config.ffn, config.vocab, config.layers, max_len},
      max_rows_(max_rows),
      paged_(paged) {
  AISP_EXPECTS(c_.d_model % 8 == 0 && c_.ffn % 8 == 0 && c_.q_width() % 8 == 0 && c_.heads % c_.kv_heads == 0 && c_.head_dim % 2 == 0 &&
                   c_.head_dim <= attention_max_head_dim,
               "labs/decode's kernels need d_model, ffn and the query width multiples of 8, heads a multiple of kv_heads "
               "and an even head_dim of at most 128");
  prepare_matvec_launches();
  const std::int64_t d = c_.d_model;
  const std::int64_t rows = max_rows;
  x_ = float_array(rows * d);
  normed_ = float_array(rows * d);
  qkv_ = float_array(rows * dims_.qkv_width());
  attended_ = float_array(rows * c_.q_width());
  gate_up_ = float_array(rows * 2 * c_.ffn);
  act_ = float_array(rows * c_.ffn);
  logits_ = float_array(rows * c_.vocab);
  AISP_EXPECTS(!paged || (paged->pages >= 1 && paged->page_tokens >= 1), "labs/decode: a paged cache needs pages of at least one position");
  const std::int64_t cache = paged ? static_cast<std::int64_t>(paged->pages) * c_.layers * paged->page_tokens * c_.kv_width()
                                   : static_cast<std::int64_t>(slots) * c_.layers * max_len * c_.kv_width();
  if (paged) {
    pages_per_slot_ = (max_len + paged->page_tokens - 1) / paged->page_tokens;
    table_ = int_array(static_cast<std::int64_t>(slots) * pages_per_slot_);
  }
  k_cache_ = bf16_array(cache);
  v_cache_ = bf16_array(cache);
  packed_ = array<uint4>(static_cast<std::int64_t>(c_.layers) * packed_layer_quads() + packed_quads(c_.vocab, c_.d_model));
  rows_ = {int_array(rows), int_array(rows), int_array(rows)};
  gather_ = int_array(rows);
  next_ = int_array(rows);
  const int attention_smem = attention_shared_bytes();
  AISP_EXPECTS(attention_smem <= 200 * 1024, "labs/decode's attention keeps a row's scores in shared memory: max_len is too long");
  allow_attention_shared_bytes<contiguous_cache>(attention_smem);
  allow_attention_shared_bytes<paged_cache>(attention_smem);
  int device = 0;
  AISP_CUDA_CHECK(cudaGetDevice(&device));
  AISP_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
  rope_ = array<double2>(static_cast<std::int64_t>(max_len) * (c_.head_dim / 2));  // Note [rope table]
  rope_table_kernel<<<static_cast<unsigned>(max_len), 64>>>(rope_, c_.head_dim, c_.rope_theta);
  AISP_CHECK_LAUNCH();
  AISP_CUDA_CHECK(cudaDeviceSynchronize());  // the table is ready before any stream's first launch
}

void gpu_decoder::pack(const __nv_bfloat16* weights, cudaStream_t stream) const {
  const weight_layout at{c_};
  for (int l = 0; l < c_.layers; ++l) {
    const layer_matrices m = packed_layer(l);
    pack_matrix(weights + at.qkv(l), dims_.qkv_width(), c_.d_model, m.qkv, stream);
    pack_matrix(weights + at.wo(l), c_.d_model, c_.q_width(), m.wo, stream);
    pack_matrix(weights + at.gate_up(l), 2 * c_.ffn, c_.d_model, m.gate_up, stream);
    pack_matrix(weights + at.down(l), c_.d_model, c_.ffn, m.down, stream);
  }
  pack_matrix(weights + at.head(), c_.vocab, c_.d_model, packed_head(), stream);
  packed_from_ = weights;
}

void gpu_decoder::forward(const __nv_bfloat16* weights, const row_meta& meta, int count, const int* gather, int picks, cudaStream_t stream,
                          const layer_plan& plan) const {
  AISP_EXPECTS(count >= 1 && count <= max_rows_ && picks >= 0 && picks <= count,
               "labs/decode: a launch of 1 to max_rows rows, picking at most as many");
  const int layers = plan.layers < 0 ? c_.layers : plan.layers;
  AISP_EXPECTS(layers >= 1 && layers <= c_.layers, "labs/decode: a launch runs 1 to every layer");
  AISP_EXPECTS(weights == packed_from_, "labs/decode: pack(weights) before forward() (Note [packed weights])");
  const auto grid_rows = static_cast<unsigned>(count);
  const weight_layout at{c_};
  embed_rows_kernel<<<grid_rows, row_block_threads, 0, stream>>>(weights + at.embedding(), meta, x_, c_.d_model);
  AISP_CHECK_LAUNCH();
  const auto eps = static_cast<float>(c_.norm_eps);
  for (int l = 0; l < layers; ++l) {
    const float residual_scale = l >= plan.scaled_from ? plan.late_scale : 1.0f;
    const layer_matrices m = packed_layer(l);
    launch_normed_matvec(m.qkv, x_, qkv_, dims_.qkv_width(), c_.d_model, count, eps, stream);
    if (paged_) {
      rope_and_attention(meta, grid_rows, l, paged_cache{table_, paged_->page_tokens, pages_per_slot_}, stream);
    } else {
      rope_and_attention(meta, grid_rows, l, contiguous_cache{}, stream);
    }
    launch_matvec(m.wo, attended_, x_, c_.d_model, c_.q_width(), count, true, residual_scale, stream);
    launch_normed_matvec(m.gate_up, x_, gate_up_, 2 * c_.ffn, c_.d_model, count, eps, stream);
    launch_swiglu_matvec(m.down, gate_up_, act_, x_, c_.d_model, c_.ffn, count, true, residual_scale, stream);
  }
  if (picks == 0) return;
  launch_dependent(rms_norm_rows_kernel, dim3(static_cast<unsigned>(picks)), dim3(norm_block_threads), 0, stream, x_, normed_, c_.d_model,
                   gather, eps);
  launch_matvec(packed_head(), normed_, logits_, c_.vocab, c_.d_model, picks, false, 1.0f, stream);
  launch_dependent(argmax_rows_kernel, dim3(static_cast<unsigned>(picks)), dim3(row_block_threads), 0, stream, logits_, c_.vocab, next_);
}

bool gpu_decoder::attention_narrow(unsigned grid_rows) const {
  return static_cast<long>(grid_rows) * c_.heads > 2L * sms_ && attention_narrow_threads % c_.head_dim == 0;
}

int gpu_decoder::attention_shared_bytes() const {
  return static_cast<int>((static_cast<std::size_t>(std::max(dims_.max_len, attention_threads)) + 3 * c_.head_dim) * sizeof(float));
}

template <class Cache>
void gpu_decoder::rope_and_attention(const row_meta& meta, unsigned grid_rows, int l, Cache cache, cudaStream_t stream) const {
  if (attention_head_lanes(c_.head_dim) == 2) {
    rope_and_attention<Cache, 2>(meta, grid_rows, l, cache, stream);
  } else {
    rope_and_attention<Cache, 4>(meta, grid_rows, l, cache, stream);
  }
}

template <class Cache, int HeadLanes>
void gpu_decoder::rope_and_attention(const row_meta& meta, unsigned grid_rows, int l, Cache cache, cudaStream_t stream) const {
  // Rows 9-16 left out where probed (Note [row probes]).
  const auto attention_rows = static_cast<unsigned>(probed_rows(row_probe::attention, static_cast<int>(grid_rows)));
  const auto attend = [&](auto kernel, int threads) {  // a block a (row, head)
    launch_dependent(kernel, dim3(attention_rows, static_cast<unsigned>(c_.heads)), dim3(static_cast<unsigned>(threads)),
                     attention_shared_bytes(), stream, qkv_, meta, rope_, k_cache_, v_cache_, attended_, dims_, cache, l);
  };
  if (grid_rows == 1) {
    attend(attention_rows_kernel<Cache, true, HeadLanes>, attention_threads);
    return;
  }
  const dim3 every_head_of_rows(static_cast<unsigned>(probed_rows(row_probe::rope, static_cast<int>(grid_rows))),
                                static_cast<unsigned>(c_.heads + 2 * c_.kv_heads));
  launch_dependent(rope_and_cache_kernel<Cache>, every_head_of_rows, dim3(static_cast<unsigned>(c_.head_dim / 2)), 0, stream, qkv_, meta,
                   rope_, k_cache_, v_cache_, dims_, cache, l);
  const bool early = attention_values_early();  // timing_switches.hpp
  if (attention_narrow(attention_rows)) {
    attend(early ? attention_rows_kernel<Cache, false, HeadLanes, attention_narrow_threads, true>
                 : attention_rows_kernel<Cache, false, HeadLanes, attention_narrow_threads>,
           attention_narrow_threads);
  } else {
    attend(early ? attention_rows_kernel<Cache, false, HeadLanes, attention_threads, true> : attention_rows_kernel<Cache, false, HeadLanes>,
           attention_threads);
  }
}

std::int64_t gpu_decoder::packed_layer_quads() const {
  return packed_quads(dims_.qkv_width(), c_.d_model) + packed_quads(c_.d_model, c_.q_width()) + packed_quads(2 * c_.ffn, c_.d_model) +
         packed_quads(c_.d_model, c_.ffn);
}

gpu_decoder::layer_matrices gpu_decoder::packed_layer(int l) const {
  uint4* qkv = packed_ + l * packed_layer_quads();
  uint4* wo = qkv + packed_quads(dims_.qkv_width(), c_.d_model);
  uint4* gate_up = wo + packed_quads(c_.d_model, c_.q_width());
  return {qkv, wo, gate_up, gate_up + packed_quads(2 * c_.ffn, c_.d_model)};
}

uint4* gpu_decoder::packed_head() const { return packed_ + c_.layers * packed_layer_quads(); }

}  // namespace aisp::decode
