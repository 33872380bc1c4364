// Serving arithmetic for `aisp tools`: KV-cache bytes for a model shape, the batch that fits, and
// the price of a token at a measured throughput. Pure functions, unit-tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aisp {

struct model_shape {
  std::string name;
  int layers = 0;
  int kv_heads = 0;  // key/value heads (GQA: fewer than the query heads)
  int head_dim = 0;
};

// Published shapes of common open models (their config.json files).
[[nodiscard]] const std::vector<model_shape>& known_model_shapes();
[[nodiscard]] std::optional<model_shape> find_model_shape(const std::string& name);

// Bytes per element of a KV-cache dtype: fp32 4, bf16/fp16 2, fp8 (e4m3/e5m2) 1; throws otherwise.
[[nodiscard]] int kv_dtype_bytes(const std::string& dtype);

// K and V, every layer, every KV head: 2 * layers * kv_heads * head_dim * bytes, per token.
[[nodiscard]] std::int64_t kv_bytes_per_token(const model_shape& shape, int dtype_bytes);

// How many sequences of `tokens_per_sequence` fit in `free_bytes` (0 when not one does).
[[nodiscard]] std::int64_t sequences_that_fit(std::int64_t free_bytes, std::int64_t bytes_per_token,
                                              std::int64_t tokens_per_sequence);

// USD per million tokens at `tokens_per_s` on `gpus` GPUs priced at `usd_per_gpu_hour` each.
[[nodiscard]] double usd_per_million_tokens(double usd_per_gpu_hour, double tokens_per_s, int gpus);

// The price of a GPU-hour: `override_usd` when above 0, else `gpu`'s entry in the price table
// (expectations/prices.json); throws contract_error with what to fill in when there is none.
[[nodiscard]] double usd_per_gpu_hour(const std::string& gpu, const std::string& price_table, double override_usd);

}  // namespace aisp
