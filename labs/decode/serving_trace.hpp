// labs/decode's workload for the serving pairs (issue 21): a seeded synthetic trace of requests
// (Poisson arrivals, prompt and output lengths from stated distributions, prompt tokens drawn from
// the vocabulary) and the per-request latencies a schedule gives (TTFT, TPOT). The KV-cache
// memory slabs and pages take: kv_pages.hpp.
// Host-only, header-only: the pairs' setup and reference and the unit tests share it. Every draw
// is a splitmix64 hash of (seed, stream, index), so a trace is the same on every machine and
// standard library (std::*_distribution is not).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "support/counter_hash.hpp"

namespace aisp::decode {

struct trace_config {
  int requests = 256;
  double arrivals_per_s = 32.0;  // a Poisson process: exponential gaps of mean 1 / rate
  int prompt_min = 64;           // prompt lengths uniform in [min, max]
  int prompt_max = 1024;
  int output_min = 16;  // output lengths uniform in [min, max] ...
  int output_max = 512;
  double output_mean = 0.0;  // ... or, when > 0, heavy-tailed: geometric of this mean, clamped to [min, max]
  int vocab = 32000;
  std::uint64_t seed = 1;
};

struct request {
  int id = 0;
  double arrival_s = 0.0;
  int output_tokens = 0;
  std::vector<int> prompt;
};

// A uniform draw in [0, 1) from (seed, stream, index).
[[nodiscard]] inline double unit_draw(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return static_cast<double>(splitmix64(splitmix64(seed ^ (stream << 48)) + index) >> 11) * 0x1.0p-53;
}

// An exponential draw of mean `mean` rounded up (a geometric count), clamped to [low, high]: the
// long tail of chat outputs, where uniform lengths leave a static batch little to waste.
[[nodiscard]] inline int geometric_int(std::uint64_t seed, std::uint64_t stream, std::uint64_t index, double mean, int low, int high) {
  const double length = std::ceil(-std::log1p(-unit_draw(seed, stream, index)) * mean);
  return static_cast<int>(std::clamp(length, static_cast<double>(low), static_cast<double>(high)));
}

// An integer uniform in [low, high].
[[nodiscard]] inline int uniform_int(std::uint64_t seed, std::uint64_t stream, std::uint64_t index, int low, int high) {
  const double span = static_cast<double>(high - low + 1);
  return low + std::min(high - low, static_cast<int>(unit_draw(seed, stream, index) * span));
}

[[nodiscard]] inline std::vector<request> make_trace(const trace_config& c) {
  if (c.requests < 1 || c.arrivals_per_s <= 0 || c.prompt_min < 1 || c.prompt_max < c.prompt_min || c.output_min < 1 ||
      c.output_max < c.output_min || c.vocab < 2 || !(c.output_mean >= 0.0 && std::isfinite(c.output_mean)))
    throw std::invalid_argument(
        "a serving trace needs requests >= 1, a positive rate, 1 <= min <= max lengths, a finite output mean >= 0 and a vocabulary");
  enum : std::uint64_t { gaps = 1, prompts = 2, outputs = 3, tokens = 4 };
  std::vector<request> trace;
  double clock = 0.0;
  std::uint64_t token_index = 0;
  for (int i = 0; i < c.requests; ++i) {
    request r;
    r.id = i;
    clock += -std::log1p(-unit_draw(c.seed, gaps, static_cast<std::uint64_t>(i))) / c.arrivals_per_s;
    r.arrival_s = clock;
    r.output_tokens = c.output_mean > 0.0 ? geometric_int(c.seed, outputs, static_cast<std::uint64_t>(i), c.output_mean, c.output_min, c.output_max)
                                          : uniform_int(c.seed, outputs, static_cast<std::uint64_t>(i), c.output_min, c.output_max);
    r.prompt.resize(static_cast<std::size_t>(uniform_int(c.seed, prompts, static_cast<std::uint64_t>(i), c.prompt_min, c.prompt_max)));
    for (auto& token : r.prompt) token = uniform_int(c.seed, tokens, token_index++, 0, c.vocab - 1);
    trace.push_back(std::move(r));
  }
  return trace;
}

// A request's latencies from when it arrived and when each of its output tokens was done:
// time to first token, and time per output token after the first (0 for a single token).
struct request_latency {
  double ttft_s = 0.0;
  double tpot_s = 0.0;
};

[[nodiscard]] inline request_latency latency_of(double arrival_s, const std::vector<double>& token_done_s) {
  if (token_done_s.empty()) throw std::invalid_argument("a request with no output token has no latency");
  request_latency l;
  l.ttft_s = token_done_s.front() - arrival_s;
  if (token_done_s.size() > 1)
    l.tpot_s = (token_done_s.back() - token_done_s.front()) / static_cast<double>(token_done_s.size() - 1);
  return l;
}

}  // namespace aisp::decode
