// labs/decode's model and its fp64 truth (issue 21): a Llama-style decoder (RMSNorm, RoPE,
// grouped-query attention, SwiGLU, an output head of its own) and a host reference that runs it in
// double precision with a KV cache. The GPU model is checked against this at small configurations,
// layer by layer through greedy decoding end to end. Host-only code, header-only: the pairs'
// references and the unit tests share it; the few functions the GPU model shares are marked.
//
// Note [weights as an input]
// The weights are one bf16 input of the pairs (`weights`, weight_layout below), drawn by the harness
// uniform in [-1, 1) like any input, fresh for every call: nothing can be downloaded, and a model
// whose weights the harness draws cannot be precomputed in setup. Every matrix is applied scaled
// by 1/sqrt(fan-in) (y = W x / sqrt(in)), so activations keep their size through the layers; the
// embedding is used as drawn. The reference computes in double on exactly the bf16 values the
// kernels read.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "support/counter_hash.hpp"
#include "support/element_codec.hpp"

#ifdef __CUDACC__
#define AISP_DECODE_HOST_DEVICE __host__ __device__
#else
#define AISP_DECODE_HOST_DEVICE
#endif

namespace aisp::decode {

struct decoder_config {
  int layers = 2;
  int d_model = 64;
  int heads = 4;
  int kv_heads = 2;  // heads % kv_heads == 0: each KV head serves heads / kv_heads query heads
  int head_dim = 16;
  int ffn = 128;
  int vocab = 97;
  double rope_theta = 10000.0;
  double norm_eps = 1e-5;

  [[nodiscard]] AISP_DECODE_HOST_DEVICE int kv_width() const { return kv_heads * head_dim; }
  [[nodiscard]] AISP_DECODE_HOST_DEVICE int q_width() const { return heads * head_dim; }
  [[nodiscard]] AISP_DECODE_HOST_DEVICE int qkv_width() const { return q_width() + 2 * kv_width(); }
  [[nodiscard]] AISP_DECODE_HOST_DEVICE std::int64_t per_layer() const {
    const std::int64_t d = d_model;
    return static_cast<std::int64_t>(qkv_width()) * d + d * q_width() + 3 * d * ffn;
  }
  // Weights a processed row multiplies (all but the embedding, which is a lookup): 2 FLOPs each.
  [[nodiscard]] AISP_DECODE_HOST_DEVICE std::int64_t matmul_parameters() const {
    return static_cast<std::int64_t>(vocab) * d_model + layers * per_layer();
  }
  // Weights: the embedding, the layers and the output head (the norms' gains are ones).
  [[nodiscard]] AISP_DECODE_HOST_DEVICE std::int64_t parameters() const {
    return 2 * static_cast<std::int64_t>(vocab) * d_model + layers * per_layer();
  }
};

// Where each matrix sits in the `weights` input, every one (out, in) row-major as nn.Linear
// stores it: the embedding (vocab, d_model); per layer the fused q, k, v projection (q_width +
// 2 kv_width, d_model: q's rows, then k's, then v's), wo (d_model, q_width), the fused gate and up
// projection (2 ffn, d_model: the gate's rows, then up's) and down (d_model, ffn); last the
// output head (vocab, d_model).
struct weight_layout {
  decoder_config c;
  [[nodiscard]] AISP_DECODE_HOST_DEVICE std::int64_t embedding() const { return 0; }
  [[nodiscard]] AISP_DECODE_HOST_DEVICE std::int64_t qkv(int layer) const {
    return static_cast<std::int64_t>(c.vocab) * c.d_model + layer * c.per_layer();
  }
  [[nodiscard]] AISP_DECODE_HOST_DEVICE std::int64_t wo(int layer) const {
    return qkv(layer) + static_cast<std::int64_t>(c.qkv_width()) * c.d_model;
  }
  [[nodiscard]] AISP_DECODE_HOST_DEVICE std::int64_t gate_up(int layer) const {
    return wo(layer) + static_cast<std::int64_t>(c.d_model) * c.q_width();
  }
  [[nodiscard]] AISP_DECODE_HOST_DEVICE std::int64_t down(int layer) const {
    return gate_up(layer) + 2LL * c.ffn * c.d_model;
  }
  [[nodiscard]] AISP_DECODE_HOST_DEVICE std::int64_t head() const {
    return static_cast<std::int64_t>(c.vocab) * c.d_model + c.layers * c.per_layer();
  }
};

// The benchmark model: Llama 3.2 1B's layers (16 of d 2048, 32 query and 8 KV heads of 64,
// SwiGLU 8192) with a 32000-token vocabulary: 1.10e9 weights.
//
// Note [an untied head]
// Llama 3.2 ties its output head to the embedding. With random weights that makes greedy decoding
// degenerate: the residual stream still carries the last token's embedding, its own row scores
// highest, and the model repeats it (two distinct tokens in 32 at the tiny configuration). A head
// of its own gives sequences that a wrong kernel cannot match by accident.
[[nodiscard]] inline decoder_config one_billion() { return {16, 2048, 32, 8, 64, 8192, 32000, 500000.0, 1e-5}; }

// The nearest bf16 (ties to even), as the float it stands for.
[[nodiscard]] inline float round_to_bf16(float value) { return bf16_bits_to_float(float_to_bf16_bits(value)); }

// Weights for host tests: uniform in [-1, 1) from a counter hash of (seed, index), rounded to
// bf16, as the harness's draw would be (not the same values).
[[nodiscard]] inline std::vector<double> seeded_weights(const decoder_config& c, std::uint64_t seed) {
  std::vector<double> w(static_cast<std::size_t>(c.parameters()));
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double unit = static_cast<double>(splitmix64(splitmix64(seed) + i) >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    w[i] = round_to_bf16(static_cast<float>(unit));
  }
  return w;
}

// A prompt token from a uniform draw in [0, 1): the pairs' prompts are harness-drawn inputs of
// that distribution (fresh every call), mapped to ids in double by the GPU and the reference
// alike; a value outside [0, 1) clamps to the nearest id.
[[nodiscard]] AISP_DECODE_HOST_DEVICE inline int token_of_draw(double draw, int vocab) {
  if (!(draw > 0.0)) return 0;
  const double scaled = draw * vocab;
  return scaled >= vocab - 1 ? vocab - 1 : static_cast<int>(scaled);
}

// x / sqrt(mean(x^2) + eps) (the gains are ones).
[[nodiscard]] inline std::vector<double> rms_norm(const std::vector<double>& x, double eps) {
  double square = 0.0;
  for (double v : x) square += v * v;
  const double scale = 1.0 / std::sqrt(square / static_cast<double>(x.size()) + eps);
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i] * scale;
  return out;
}

// RoPE in the half-split layout: rotate pairs (i, i + dim / 2) by position * theta^(-2i / dim).
inline void apply_rope(double* head, int dim, int position, double theta) {
  const int half = dim / 2;
  for (int i = 0; i < half; ++i) {
    const double angle = position * std::pow(theta, -2.0 * i / dim);
    const double a = head[i];
    const double b = head[i + half];
    head[i] = a * std::cos(angle) - b * std::sin(angle);
    head[i + half] = a * std::sin(angle) + b * std::cos(angle);
  }
}

// Grouped-query attention of one query token over `keys` cached positions: query head h reads KV
// head h / (heads / kv_heads). q is (heads, head_dim); keys and values are (keys, kv_heads,
// head_dim); the result is (heads, head_dim).
[[nodiscard]] inline std::vector<double> grouped_attention(const decoder_config& c, const std::vector<double>& q,
                                                           const std::vector<double>& keys, const std::vector<double>& values) {
  const auto positions = keys.size() / static_cast<std::size_t>(c.kv_width());
  const int group = c.heads / c.kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
  std::vector<double> out(static_cast<std::size_t>(c.q_width()), 0.0);
  std::vector<double> weights(positions);
  for (int head = 0; head < c.heads; ++head) {
    const auto kv_offset = static_cast<std::size_t>(head / group * c.head_dim);
    const double* query = q.data() + static_cast<std::size_t>(head * c.head_dim);
    double largest = -HUGE_VAL;
    for (std::size_t j = 0; j < positions; ++j) {
      const double* key = keys.data() + j * static_cast<std::size_t>(c.kv_width()) + kv_offset;
      double dot = 0.0;
      for (int i = 0; i < c.head_dim; ++i) dot += query[i] * key[i];
      weights[j] = dot * scale;
      largest = std::fmax(largest, weights[j]);
    }
    double total = 0.0;
    for (auto& w : weights) total += (w = std::exp(w - largest));
    double* result = out.data() + static_cast<std::size_t>(head * c.head_dim);
    for (std::size_t j = 0; j < positions; ++j) {
      const double* value = values.data() + j * static_cast<std::size_t>(c.kv_width()) + kv_offset;
      for (int i = 0; i < c.head_dim; ++i) result[i] += weights[j] / total * value[i];
    }
  }
  return out;
}

// Note [a bf16 cache]
// The model's definition includes its KV cache's precision: K (after RoPE) and V are stored as
// bf16, in the reference as on the GPU, and everything else stays wide (double here, fp32 there).
// The GPU's K and V differ from these by fp32 rounding before the bf16 rounding, so a value may
// land one bf16 ulp apart now and then; greedy tokens agree unless two logits nearly tie.
//
// The fp64 model over `weights` (weight_layout, Note [weights as an input]), which it copies.
class decoder_reference {
 public:
  decoder_reference(const decoder_config& config, std::span<const double> weights)
      : c_(config), w_(weights.begin(), weights.end()), layers_(static_cast<std::size_t>(config.layers)) {
    if (static_cast<std::int64_t>(w_.size()) != c_.parameters())
      throw std::invalid_argument("decoder_reference: the weights do not match the configuration's parameter count");
  }

  [[nodiscard]] const decoder_config& config() const { return c_; }
  [[nodiscard]] int cached_tokens() const { return layers_.empty() ? 0 : static_cast<int>(layers_[0].keys.size() / c_.kv_width()); }
  void clear_cache() {
    for (auto& layer : layers_) {
      layer.keys.clear();
      layer.values.clear();
    }
  }

  // Note [controlled acceptance]: speculative decoding's target. Its draft is the model's first
  // layers (with the final norm and the head), so how often the two agree depends on how much
  // the later layers change the residual stream; scaling their outputs (attention's and the
  // MLP's) by `scale` sets it: 0 makes the target the draft (every draft token accepted), 1 the
  // plain model. A power of two, so the GPU's fp32 rounding is scaled exactly too.
  void scale_late_layers(int from, double scale) {
    scaled_from_ = from;
    late_scale_ = scale;
  }

  // One token at the next position: its logits over the vocabulary, its K and V appended to the
  // cache of every layer.
  std::vector<double> step(int token) {
    const weight_layout at{c_};
    const int position = cached_tokens();
    const double* embedding = w_.data() + at.embedding() + static_cast<std::ptrdiff_t>(token) * c_.d_model;
    std::vector<double> x(embedding, embedding + c_.d_model);
    for (int l = 0; l < c_.layers; ++l) {
      auto& cache = layers_[static_cast<std::size_t>(l)];
      const double residual_scale = l >= scaled_from_ ? late_scale_ : 1.0;
      const auto qkv = apply(at.qkv(l), rms_norm(x, c_.norm_eps), c_.qkv_width());
      std::vector<double> q(qkv.begin(), qkv.begin() + c_.q_width());
      std::vector<double> k(qkv.begin() + c_.q_width(), qkv.begin() + c_.q_width() + c_.kv_width());
      for (int head = 0; head < c_.heads; ++head) apply_rope(q.data() + head * c_.head_dim, c_.head_dim, position, c_.rope_theta);
      for (int head = 0; head < c_.kv_heads; ++head) apply_rope(k.data() + head * c_.head_dim, c_.head_dim, position, c_.rope_theta);
      // The cache holds bf16, as the GPU model's does (Note [a bf16 cache]).
      for (double value : k) cache.keys.push_back(round_to_bf16(static_cast<float>(value)));
      for (auto v = qkv.begin() + c_.q_width() + c_.kv_width(); v != qkv.end(); ++v)
        cache.values.push_back(round_to_bf16(static_cast<float>(*v)));
      const auto projected = apply(at.wo(l), grouped_attention(c_, q, cache.keys, cache.values), c_.d_model);
      for (int i = 0; i < c_.d_model; ++i) x[i] += residual_scale * projected[i];
      const auto gate_up = apply(at.gate_up(l), rms_norm(x, c_.norm_eps), 2 * c_.ffn);
      std::vector<double> act(static_cast<std::size_t>(c_.ffn));
      for (int i = 0; i < c_.ffn; ++i) {
        const double gate = gate_up[static_cast<std::size_t>(i)];
        act[static_cast<std::size_t>(i)] = gate / (1.0 + std::exp(-gate)) * gate_up[static_cast<std::size_t>(c_.ffn + i)];  // SwiGLU
      }
      const auto down = apply(at.down(l), act, c_.d_model);
      for (int i = 0; i < c_.d_model; ++i) x[i] += residual_scale * down[i];
    }
    return apply(at.head(), rms_norm(x, c_.norm_eps), c_.vocab);
  }

  // Greedy decoding: the prompt through the cache, then `count` argmax tokens (the lowest id on a tie).
  std::vector<int> greedy(const std::vector<int>& prompt, int count) {
    clear_cache();
    std::vector<double> logits;
    for (int token : prompt) logits = step(token);
    std::vector<int> out;
    for (int i = 0; i < count; ++i) {
      int best = 0;
      for (int t = 1; t < c_.vocab; ++t) best = logits[static_cast<std::size_t>(t)] > logits[static_cast<std::size_t>(best)] ? t : best;
      out.push_back(best);
      if (i + 1 < count) logits = step(best);
    }
    return out;
  }

 private:
  struct layer_cache {
    std::vector<double> keys, values;  // one kv_width row per position
  };

  // y = W x / sqrt(in): W the (out, in) matrix at `offset`, in = x.size().
  [[nodiscard]] std::vector<double> apply(std::int64_t offset, const std::vector<double>& x, int out) const {
    const auto in = static_cast<std::ptrdiff_t>(x.size());
    const double scale = 1.0 / std::sqrt(static_cast<double>(in));
    std::vector<double> y(static_cast<std::size_t>(out));
    for (int o = 0; o < out; ++o) {
      const double* row = w_.data() + offset + o * in;
      double sum = 0.0;
      for (std::ptrdiff_t i = 0; i < in; ++i) sum += row[i] * x[static_cast<std::size_t>(i)];
      y[static_cast<std::size_t>(o)] = sum * scale;
    }
    return y;
  }

  decoder_config c_;
  std::vector<double> w_;
  std::vector<layer_cache> layers_;
  int scaled_from_ = 0;
  double late_scale_ = 1.0;
};

}  // namespace aisp::decode
