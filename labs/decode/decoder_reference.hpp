// labs/decode's model and its fp64 truth (issue 21): a Llama-style decoder (RMSNorm, RoPE,
// grouped-query attention, SwiGLU, an output head of its own) whose weights come from a seed, never from a
// download, and a host reference that runs it in double precision with a KV cache. The GPU model
// is checked against this layer by layer at a tiny configuration and by greedy decoding end to
// end. Host-only, header-only: the lab's reference functions and the unit tests share it.
//
// Note [weights from a counter]
// Every weight is a pure function of (seed, tensor, index): a splitmix64 hash of the three drawn
// to uniform [-1, 1), scaled by 1/sqrt(fan-in) (activations keep their size through the layers),
// then rounded to the nearest bf16. So the GPU can generate the 1B model in place, the host can
// regenerate any tensor of it, and both hold the same bf16 values: the reference computes in
// double on exactly the numbers the kernels read.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "support/counter_hash.hpp"
#include "support/element_codec.hpp"

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
  std::uint64_t seed = 1;

  [[nodiscard]] int kv_width() const { return kv_heads * head_dim; }
  [[nodiscard]] int q_width() const { return heads * head_dim; }
  // Weights: the embedding, the layers and the output head (the norms' gains are ones).
  [[nodiscard]] std::int64_t parameters() const {
    const std::int64_t d = d_model;
    const std::int64_t per_layer = d * q_width() + 2 * d * kv_width() + q_width() * d + 3 * d * ffn;
    return 2 * static_cast<std::int64_t>(vocab) * d + layers * per_layer;
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
[[nodiscard]] inline decoder_config one_billion() { return {16, 2048, 32, 8, 64, 8192, 32000, 500000.0, 1e-5, 1}; }

// The tensors of the model, the `tensor` of Note [weights from a counter].
enum class tensor : std::uint32_t { embedding, wq, wk, wv, wo, w_gate, w_up, w_down, lm_head };

// The nearest bf16 (ties to even), as the float it stands for: what the GPU model stores.
[[nodiscard]] inline float round_to_bf16(float value) { return bf16_bits_to_float(float_to_bf16_bits(value)); }

// Weight `index` of `which` in layer `layer` (the embedding's layer is 0), fan-in `fan_in`.
[[nodiscard]] inline float weight_at(std::uint64_t seed, tensor which, int layer, std::uint64_t index, int fan_in) {
  const std::uint64_t stream = splitmix64(seed ^ (static_cast<std::uint64_t>(which) << 56) ^ (static_cast<std::uint64_t>(layer) << 40));
  const std::uint64_t draw = splitmix64(stream + index);
  const double unit = static_cast<double>(draw >> 11) * 0x1.0p-53 * 2.0 - 1.0;  // [-1, 1)
  return round_to_bf16(static_cast<float>(unit / std::sqrt(static_cast<double>(fan_in))));
}

// A (rows, cols) row-major matrix of `which` as doubles: y = x W for x of `rows` entries.
[[nodiscard]] inline std::vector<double> weight_matrix(const decoder_config& c, tensor which, int layer, int rows, int cols) {
  std::vector<double> w(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  const int fan_in = which == tensor::embedding ? c.d_model : rows;
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = weight_at(c.seed, which, layer, i, fan_in);
  return w;
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

// The fp64 model, its weights regenerated from the seed. For tiny configurations: the benchmark
// model's weights would take 10 GB as doubles.
class decoder_reference {
 public:
  explicit decoder_reference(const decoder_config& config) : c_(config) {
    embedding_ = weight_matrix(c_, tensor::embedding, 0, c_.vocab, c_.d_model);
    head_ = weight_matrix(c_, tensor::lm_head, 0, c_.d_model, c_.vocab);
    for (int l = 0; l < c_.layers; ++l) {
      layers_.push_back({weight_matrix(c_, tensor::wq, l, c_.d_model, c_.q_width()),
                         weight_matrix(c_, tensor::wk, l, c_.d_model, c_.kv_width()),
                         weight_matrix(c_, tensor::wv, l, c_.d_model, c_.kv_width()),
                         weight_matrix(c_, tensor::wo, l, c_.q_width(), c_.d_model),
                         weight_matrix(c_, tensor::w_gate, l, c_.d_model, c_.ffn),
                         weight_matrix(c_, tensor::w_up, l, c_.d_model, c_.ffn),
                         weight_matrix(c_, tensor::w_down, l, c_.ffn, c_.d_model),
                         {},
                         {}});
    }
  }

  [[nodiscard]] const decoder_config& config() const { return c_; }
  [[nodiscard]] int cached_tokens() const { return layers_.empty() ? 0 : static_cast<int>(layers_[0].keys.size() / c_.kv_width()); }
  void clear_cache() {
    for (auto& layer : layers_) {
      layer.keys.clear();
      layer.values.clear();
    }
  }

  // One token at the next position: its logits over the vocabulary, its K and V appended to the
  // cache of every layer.
  std::vector<double> step(int token) {
    const int position = cached_tokens();
    std::vector<double> x(embedding_.begin() + static_cast<std::ptrdiff_t>(token) * c_.d_model,
                          embedding_.begin() + static_cast<std::ptrdiff_t>(token + 1) * c_.d_model);
    for (auto& layer : layers_) {
      const auto h = rms_norm(x, c_.norm_eps);
      auto q = matvec(h, layer.wq, c_.d_model, c_.q_width());
      auto k = matvec(h, layer.wk, c_.d_model, c_.kv_width());
      const auto v = matvec(h, layer.wv, c_.d_model, c_.kv_width());
      for (int head = 0; head < c_.heads; ++head) apply_rope(q.data() + head * c_.head_dim, c_.head_dim, position, c_.rope_theta);
      for (int head = 0; head < c_.kv_heads; ++head) apply_rope(k.data() + head * c_.head_dim, c_.head_dim, position, c_.rope_theta);
      layer.keys.insert(layer.keys.end(), k.begin(), k.end());
      layer.values.insert(layer.values.end(), v.begin(), v.end());
      const auto attended = grouped_attention(c_, q, layer.keys, layer.values);
      const auto projected = matvec(attended, layer.wo, c_.q_width(), c_.d_model);
      for (int i = 0; i < c_.d_model; ++i) x[i] += projected[i];
      const auto g = rms_norm(x, c_.norm_eps);
      const auto gate = matvec(g, layer.w_gate, c_.d_model, c_.ffn);
      auto up = matvec(g, layer.w_up, c_.d_model, c_.ffn);
      for (int i = 0; i < c_.ffn; ++i) up[i] *= gate[i] / (1.0 + std::exp(-gate[i]));  // SwiGLU: silu(gate) * up
      const auto down = matvec(up, layer.w_down, c_.ffn, c_.d_model);
      for (int i = 0; i < c_.d_model; ++i) x[i] += down[i];
    }
    return matvec(rms_norm(x, c_.norm_eps), head_, c_.d_model, c_.vocab);
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
  struct layer_weights {
    std::vector<double> wq, wk, wv, wo, w_gate, w_up, w_down;
    std::vector<double> keys, values;  // the cache: one kv_width row per position
  };

  // y = x W, W (rows, cols) row-major.
  [[nodiscard]] static std::vector<double> matvec(const std::vector<double>& x, const std::vector<double>& w, int rows, int cols) {
    std::vector<double> y(static_cast<std::size_t>(cols), 0.0);
    for (int r = 0; r < rows; ++r) {
      const double xr = x[static_cast<std::size_t>(r)];
      const double* row = w.data() + static_cast<std::size_t>(r) * cols;
      for (int j = 0; j < cols; ++j) y[static_cast<std::size_t>(j)] += xr * row[j];
    }
    return y;
  }

  decoder_config c_;
  std::vector<double> embedding_;  // (vocab, d_model)
  std::vector<double> head_;       // (d_model, vocab)
  std::vector<layer_weights> layers_;
};

}  // namespace aisp::decode
