#include "analysis/serving_math.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "aisp/check.hpp"

namespace aisp {

const std::vector<model_shape>& known_model_shapes() {
  static const std::vector<model_shape> shapes = {
      {"llama-3.1-8b", 32, 8, 128},   {"llama-3.1-70b", 80, 8, 128}, {"llama-3.1-405b", 126, 8, 128},
      {"mistral-7b", 32, 8, 128},     {"qwen2.5-72b", 80, 8, 128},
  };
  return shapes;
}

std::optional<model_shape> find_model_shape(const std::string& name) {
  for (const auto& shape : known_model_shapes()) {
    if (shape.name == name) return shape;
  }
  return std::nullopt;
}

int kv_dtype_bytes(const std::string& dtype) {
  if (dtype == "fp32") return 4;
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "fp8" || dtype == "e4m3" || dtype == "e5m2") return 1;
  throw contract_error("unknown KV-cache dtype '" + dtype + "' (fp32, bf16, fp16, fp8)");
}

std::int64_t kv_bytes_per_token(const model_shape& shape, int dtype_bytes) {
  AISP_EXPECTS(shape.layers > 0 && shape.kv_heads > 0 && shape.head_dim > 0 && dtype_bytes > 0,
               "a model shape needs layers, KV heads and a head dimension above 0");
  return std::int64_t{2} * shape.layers * shape.kv_heads * shape.head_dim * dtype_bytes;
}

std::int64_t sequences_that_fit(std::int64_t free_bytes, std::int64_t bytes_per_token, std::int64_t tokens_per_sequence) {
  AISP_EXPECTS(bytes_per_token > 0 && tokens_per_sequence > 0, "a sequence needs tokens and bytes per token above 0");
  std::int64_t per_sequence = 0;
  if (free_bytes <= 0 || __builtin_mul_overflow(bytes_per_token, tokens_per_sequence, &per_sequence)) return 0;  // past int64: none fits
  return free_bytes / per_sequence;
}

double usd_per_million_tokens(double usd_per_gpu_hour_each, double tokens_per_s, int gpus) {
  AISP_EXPECTS(usd_per_gpu_hour_each > 0 && tokens_per_s > 0 && gpus > 0,
               "a price, a throughput and a GPU count above 0 are needed");
  return usd_per_gpu_hour_each * gpus / 3600.0 / tokens_per_s * 1e6;
}

double usd_per_gpu_hour(const std::string& gpu, const std::string& price_table, double override_usd) {
  if (override_usd > 0) return override_usd;
  std::ifstream in(price_table);
  const auto table = nlohmann::json::parse(in, nullptr, false);
  AISP_EXPECTS(!table.is_discarded(), "cannot read the price table " + price_table);
  const auto entry = table.value("usd_per_gpu_hour", nlohmann::json::object()).value(gpu, nlohmann::json(nullptr));
  AISP_EXPECTS(entry.is_number() && entry.get<double>() > 0,
               "no price for '" + gpu + "' in " + price_table + ": fill it in, or pass --usd-per-hour");
  return entry.get<double>();
}

}  // namespace aisp
