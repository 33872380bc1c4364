// labs/decode's model on the GPU: the scratch of a launch of up to `max_rows` rows, the KV cache of
// `slots` sequences of up to `max_len` positions (a slab a slot, or a pool of pages that a block
// table gives the slots: Note [paged cache]), and forward(): the rows through every layer of
// the model whose weights it is given (weight_layout), then the logits and the greedy token of the
// rows asked for. Built in a variant's setup(); every launch on the stream it is given, checked.
// A decode loop calls pack(weights) first in every call (Note [packed weights]).
// Kernels: decoder_kernels.cuh (rows, norms, RoPE, attention) and matvec_launch.cuh (the matvec),
// compiled in gpu_decoder.cu alone.
//
// Note [one decoder unit]
// This header declares the decoder; gpu_decoder.cu defines it, and only that unit includes the
// kernels. The lab's pairs and the GPU tests link its one object (CMakeLists.txt:
// aisp_decode_model). Until 2026-12-08 the class lived in this header in an anonymous namespace,
// so each of the six pair units and two GPU tests compiled every kernel again: 42-50 s a unit on
// the 2-core build machine, ~360 s of compiling for any change to a kernel, and six copies of the
// kernels in `aisp` (65.7 MB). Now gpu_decoder.cu takes ~31 s, a pair unit 8-12 s,
// decode_model_test 17 s (~130 s in all), and `aisp` is 31.9 MB. The kernels' code is the same:
// scripts/same_kernels_ptx.py found kv_cache.cu's 56 kernels of the old build identical in
// gpu_decoder.cu's PTX, names and numbering aside.

#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "aisp/device_scratch.hpp"
#include "decoder_reference.hpp"
#include "decoder_shapes.cuh"

namespace aisp::decode {

// The row metadata a launch reads, device arrays the decode loops fill.
struct row_buffers {
  int* token;
  int* slot;
  int* position;
  [[nodiscard]] row_meta meta() const { return {token, slot, position}; }
};

// Which layers a launch runs and how the late ones add to the residual stream (Note [controlled
// acceptance]): speculative decoding's draft is the first `layers`; its target scales the
// output of layers from `scaled_from` on by `late_scale`. The default: the whole plain model.
struct layer_plan {
  int layers = -1;  // -1: every layer
  int scaled_from = 0;
  float late_scale = 1.0f;
};

// Note [paged cache]: the cache as `pages` pages of `page_tokens` positions.
struct paged_layout {
  int pages = 0;
  int page_tokens = 0;
};

class gpu_decoder {
 public:
  gpu_decoder(const decoder_config& config, int max_rows, int slots, int max_len, std::optional<paged_layout> paged = std::nullopt);

  [[nodiscard]] const decoder_config& config() const { return c_; }
  [[nodiscard]] const model_dims& dims() const { return dims_; }
  [[nodiscard]] int max_rows() const { return max_rows_; }
  // Row metadata and picked rows for the loops of decode_loops.cuh; next(): forward()'s picks.
  [[nodiscard]] const row_buffers& rows() const { return rows_; }
  [[nodiscard]] int* gather() const { return gather_; }
  [[nodiscard]] int* next() const { return next_; }
  // A paged cache's block table (slots x pages_per_slot, as kv_page_pool::table()): the caller
  // copies the pool's table here, on the launch's stream, before a launch that reads it.
  [[nodiscard]] int* block_table() const { return table_; }
  // The last forward()'s logits, (picks, vocab) fp32: for the layer-by-layer test against the reference.
  [[nodiscard]] const float* logits() const { return logits_; }
  // The matvecs' weights of `weights` in the order their lanes read them (Note [packed weights]),
  // on `stream`: a decode loop's first work in every call, since the harness draws the weights
  // afresh for each; forward() asks for the same pointer.
  void pack(const __nv_bfloat16* weights, cudaStream_t stream) const;

  // `count` rows of `meta` through the model, their K and V into the cache; then the greedy token
  // of `picks` rows into next(): rows gather[0..picks), or rows 0..picks where gather is null. A
  // launch of prompt chunks that completes no prompt picks none: it only fills the cache.
  void forward(const __nv_bfloat16* weights, const row_meta& meta, int count, const int* gather, int picks, cudaStream_t stream,
               const layer_plan& plan = {}) const;

 private:
  // Where each matvec's packed weights are (Note [packed weights]): a layer's QKV, wo, gate/up
  // and down, layer by layer, then the head.
  struct layer_matrices {
    uint4 *qkv, *wo, *gate_up, *down;
  };
  [[nodiscard]] std::int64_t packed_layer_quads() const;
  [[nodiscard]] layer_matrices packed_layer(int l) const;
  [[nodiscard]] uint4* packed_head() const;

  // Wide blocks while they fit in one wave at two an SM, else narrow ones where head_dim divides
  // them (Note [attention waves]).
  [[nodiscard]] bool attention_narrow(unsigned grid_rows) const;
  [[nodiscard]] int attention_shared_bytes() const;  // scores, then q, the new k and the new v

  // Layer l's RoPE and cache append, then its attention, over a cache of layout Cache; in one
  // kernel at one row (Note [rope in attention]). Both are dependent launches. Defined, and
  // instantiated, in gpu_decoder.cu.
  template <class Cache>
  void rope_and_attention(const row_meta& meta, unsigned grid_rows, int l, Cache cache, cudaStream_t stream) const;
  template <class Cache, int HeadLanes>
  void rope_and_attention(const row_meta& meta, unsigned grid_rows, int l, Cache cache, cudaStream_t stream) const;

  template <class T>
  T* array(std::int64_t count) {
    arrays_.push_back(std::make_unique<device_scratch>(static_cast<std::size_t>(count) * sizeof(T)));
    return static_cast<T*>(arrays_.back()->data());
  }
  __nv_bfloat16* bf16_array(std::int64_t count) { return array<__nv_bfloat16>(count); }
  float* float_array(std::int64_t count) { return array<float>(count); }
  int* int_array(std::int64_t count) { return array<int>(count); }

  decoder_config c_;
  model_dims dims_;
  int max_rows_;
  int sms_ = 0;  // the GPU's multiprocessors: attention's blocks a wave (Note [attention waves])
  std::optional<paged_layout> paged_;
  int pages_per_slot_ = 0;
  std::vector<std::unique_ptr<device_scratch>> arrays_;  // every allocation, freed with the model
  float *x_ = nullptr, *normed_ = nullptr, *qkv_ = nullptr, *attended_ = nullptr, *gate_up_ = nullptr, *act_ = nullptr, *logits_ = nullptr;
  __nv_bfloat16 *k_cache_ = nullptr, *v_cache_ = nullptr;
  row_buffers rows_{};
  int* gather_ = nullptr;
  int* next_ = nullptr;
  int* table_ = nullptr;  // a paged cache's block table
  double2* rope_ = nullptr;  // Note [rope table]
  uint4* packed_ = nullptr;  // Note [packed weights]
  mutable const __nv_bfloat16* packed_from_ = nullptr;  // the weights pack() last copied
};

}  // namespace aisp::decode
