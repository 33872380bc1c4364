// `aisp tools`: serving arithmetic a performance engineer does on the back of an envelope.
//   kv-cache        KV-cache bytes for a model shape, and the batch that fits in free memory
//   cost-per-token  USD per million tokens from a measured throughput and a GPU-hour price
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "analysis/serving_math.hpp"
#include "cli/commands.hpp"
#include "cli/number_checks.hpp"
#include "hw/system_info.hpp"
#include "support/paths.hpp"

namespace aisp::cli {
namespace {

using nlohmann::json;

struct kv_options {
  std::string model;
  model_shape shape;
  std::string dtype = "bf16";
  std::int64_t tokens = 0;  // per sequence: prompt and generated
  std::int64_t batch = 1;
  double free_gib = 0;
  bool as_json = false;
};

// A byte count as a JSON integer while it fits one (it is a whole number of bytes below 2^53).
json whole_bytes(double bytes) { return bytes < 9.0e15 ? json(static_cast<std::int64_t>(bytes)) : json(bytes); }

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

// Free device memory: --free-gib, else GPU 0's as NVML reads it now; 0 when neither is known.
double free_bytes(const kv_options& options, std::string& source) {
  if (options.free_gib > 0) {
    source = "--free-gib";
    return options.free_gib * 1024.0 * 1024.0 * 1024.0;
  }
  const auto system = probe_system();
  if (system.gpus.empty() || !system.gpus[0].telemetry.is_object() || !system.gpus[0].telemetry.contains("memory_free_bytes")) {
    source = system.gpu_absence_reason.empty() ? "no NVML reading" : "no GPU here";
    return 0;
  }
  source = "GPU 0's free memory now (" + system.gpus[0].name + ")";
  return system.gpus[0].telemetry["memory_free_bytes"].get<double>();
}

int kv_cache(kv_options options) {
  if (!options.model.empty()) {
    const auto known = find_model_shape(options.model);
    std::string names;
    for (const auto& s : known_model_shapes()) names += (names.empty() ? "" : ", ") + s.name;
    AISP_EXPECTS(known.has_value(), "unknown model '" + options.model + "' (known: " + names + "; or give --layers, --kv-heads, --head-dim)");
    // --layers, --kv-heads and --head-dim given beside --model override its values (a model cut
    // to fewer layers): they were silently ignored, and the output named the model as it ships.
    const model_shape given = options.shape;
    options.shape = *known;
    std::string changed;
    const auto override_with = [&](int value, int& field, const char* name) {
      if (value <= 0 || value == field) return;
      field = value;
      changed += fmt::format("{}{} {}", changed.empty() ? "" : ", ", name, value);
    };
    override_with(given.layers, options.shape.layers, "layers");
    override_with(given.kv_heads, options.shape.kv_heads, "kv-heads");
    override_with(given.head_dim, options.shape.head_dim, "head-dim");
    if (!changed.empty()) options.shape.name += " (" + changed + ")";
  }
  AISP_EXPECTS(options.shape.layers > 0 && options.shape.kv_heads > 0 && options.shape.head_dim > 0,
               "name a --model or give --layers, --kv-heads and --head-dim");
  const int element = kv_dtype_bytes(options.dtype);
  const auto per_token = kv_bytes_per_token(options.shape, element);
  // In double: a sequence of 10^17 tokens overflows int64 bytes (exact to 2^53, far past any memory).
  const double per_sequence = static_cast<double>(per_token) * static_cast<double>(options.tokens);
  std::string source;
  const double free = free_bytes(options, source);
  json out = {{"model", options.shape.name.empty() ? "custom" : options.shape.name},
              {"layers", options.shape.layers},
              {"kv_heads", options.shape.kv_heads},
              {"head_dim", options.shape.head_dim},
              {"dtype", options.dtype},
              {"tokens_per_sequence", options.tokens},
              {"bytes_per_token", per_token},
              {"bytes_per_sequence", whole_bytes(per_sequence)},
              {"batch", options.batch},
              {"bytes_for_batch", whole_bytes(per_sequence * static_cast<double>(options.batch))}};
  if (free > 0) {
    out["free_bytes"] = free;
    out["free_source"] = source;
    out["sequences_that_fit"] = sequences_that_fit(static_cast<std::int64_t>(free), per_token, options.tokens);
  }
  if (options.as_json) {
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("%s, %s KV cache: %s per token (2 x %d layers x %d KV heads x %d x %d B)\n", out["model"].get<std::string>().c_str(),
              options.dtype.c_str(), fmt::format("{} KiB", static_cast<double>(per_token) / 1024.0).c_str(), options.shape.layers, options.shape.kv_heads,
              options.shape.head_dim, element);
  std::printf("  one sequence of %lld tokens: %s; a batch of %lld: %s\n", static_cast<long long>(options.tokens),
              gib(per_sequence).c_str(), static_cast<long long>(options.batch),
              gib(per_sequence * static_cast<double>(options.batch)).c_str());
  if (free > 0) {
    std::printf("  fits %lld such sequences in %s free (%s), weights and activations not counted\n",
                static_cast<long long>(out["sequences_that_fit"].get<std::int64_t>()), gib(free).c_str(), source.c_str());
  } else {
    std::printf("  the batch that fits: pass --free-gib (%s)\n", source.c_str());
  }
  return 0;
}

}  // namespace

void add_tools_command(CLI::App& app, outcome& result) {
  auto* tools = app.add_subcommand("tools", "Serving arithmetic: KV-cache size and the batch that fits, cost per token.");
  tools->require_subcommand(1);

  auto kv = std::make_shared<kv_options>();
  auto* kv_command = tools->add_subcommand(
      "kv-cache", "KV-cache bytes per token and per sequence for a model shape, and how many sequences fit in free memory "
                  "(--free-gib, else GPU 0's free memory now).");
  kv_command->footer("Examples:\n  aisp tools kv-cache --model llama-3.1-70b --tokens 8192 --batch 16\n"
                     "  aisp tools kv-cache --layers 32 --kv-heads 8 --head-dim 128 --tokens 4096 --dtype fp8 --free-gib 60");
  kv_command->add_option("--model", kv->model, "a known shape: llama-3.1-8b, llama-3.1-70b, llama-3.1-405b, mistral-7b, qwen2.5-72b");
  kv_command->add_option("--layers", kv->shape.layers, "transformer layers (or, with --model, overriding its count)")->check(cli::positive_number);
  kv_command->add_option("--kv-heads", kv->shape.kv_heads, "key/value heads (or, with --model, overriding its count)")->check(cli::positive_number);
  kv_command->add_option("--head-dim", kv->shape.head_dim, "head dimension (or, with --model, overriding it)")->check(cli::positive_number);
  kv_command->add_option("--tokens", kv->tokens, "tokens per sequence, prompt and generated")->required()->check(cli::positive_number);
  kv_command->add_option("--batch", kv->batch, "sequences (default 1)")->check(cli::positive_number);
  kv_command->add_option("--dtype", kv->dtype, "fp32, bf16 (default), fp16 or fp8");
  kv_command->add_option("--free-gib", kv->free_gib, "free device memory in GiB (default: GPU 0's now)")->check(cli::positive_number);
  kv_command->add_flag("--json", kv->as_json, "machine-readable output");
  kv_command->callback([kv, &result] { result.exit_code = kv_cache(*kv); });

  auto tokens_per_s = std::make_shared<double>(0);
  auto gpus = std::make_shared<int>(1);
  auto gpu = std::make_shared<std::string>("h100");
  auto prices = std::make_shared<std::string>(shipped_data_file("expectations/prices.json"));
  auto usd_per_hour = std::make_shared<double>(0);
  auto as_json = std::make_shared<bool>(false);
  auto* cost = tools->add_subcommand("cost-per-token",
                                     "USD per million tokens from a measured throughput (tokens/s over all the GPUs serving it) and a "
                                     "GPU-hour price (--usd-per-hour, else --gpu's entry in expectations/prices.json).");
  cost->footer("Example: aisp tools cost-per-token --tokens-per-s 2500 --gpus 8 --usd-per-hour 2.5");
  cost->add_option("--tokens-per-s", *tokens_per_s, "measured tokens per second")->required()->check(cli::positive_number);
  cost->add_option("--gpus", *gpus, "GPUs that produce that throughput (default 1)")->check(cli::positive_number);
  cost->add_option("--gpu", *gpu, "the price table's key (default h100)");
  cost->add_option("--prices", *prices, "the editable price table (default expectations/prices.json here, else the one shipped with aisp)");
  cost->add_option("--usd-per-hour", *usd_per_hour, "price of one GPU-hour, overriding the table")->check(cli::positive_number);
  cost->add_flag("--json", *as_json, "machine-readable output");
  cost->callback([=, &result] {
    const double price = usd_per_gpu_hour(*gpu, *prices, *usd_per_hour);
    const double usd = usd_per_million_tokens(price, *tokens_per_s, *gpus);
    const json out = {{"tokens_per_s", *tokens_per_s}, {"gpus", *gpus}, {"usd_per_gpu_hour", price}, {"usd_per_million_tokens", usd}};
    if (*as_json) {
      std::printf("%s\n", out.dump(2).c_str());
    } else {
      std::printf("%.4f USD per million tokens (%.0f tokens/s on %d GPU(s) at %.2f USD per GPU-hour)\n", usd, *tokens_per_s, *gpus, price);
    }
    result.exit_code = 0;
  });
}

}  // namespace aisp::cli
