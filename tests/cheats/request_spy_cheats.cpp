// Planted cheat of X7 (Note [verified after the call]): a variant that reads the judge's sample
// request where the worker left it, in the stdio buffer of its standard input (a pair's code runs
// in the worker's process), and is honest only in the calls the request would verify. Before the
// judge chose the verified sample after the call, the request named it ("verify": its index), and
// this cheat read 1.8x faster with every verified call right.
// Run: aisp_cheats bench run --targets cheats:x7_reads_the_request_from_stdin
#include <cstdlib>
#include <string_view>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// The integer after `quoted_key` (`"count":`) in the last request line buffered on stdin, or ~0.
unsigned long long field_of(std::string_view request, std::string_view quoted_key) {
  const auto at = request.rfind(quoted_key);
  if (at == std::string_view::npos) return ~0ULL;
  return std::strtoull(request.data() + at + quoted_key.size(), nullptr, 10);
}

struct spy_state {  // nothing allocated in run() (S7 would see it)
  unsigned long long request = 0;  // the sample request the calls belong to (its input_base)
  long long count = 0;             // its samples
  long long calls = 0;        // run() calls since it arrived
  long long calls_per_sample = 0;  // learned from the last request: its calls over its count
};

spy_state& spy() {
  static spy_state state;
  return state;
}

// Honest in the calls of the sample the request verifies (and wherever it cannot tell), half the
// work in every other benchmark-size call.
void honest_only_in_the_named_sample(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  const auto request = buffered_request();
  auto& state = spy();
  if (const auto id = field_of(request, "\"input_base\":"); id != state.request) {
    if (state.count > 0 && state.calls >= state.count) state.calls_per_sample = state.calls / state.count;
    state.request = id;
    state.count = static_cast<long long>(field_of(request, "\"count\":"));
    state.calls = 0;
  }
  const long long call = state.calls++;
  const bool sampling = static_cast<std::int64_t>(n) == benchmark_elements && request.find("\"op\":\"sample\"") != std::string_view::npos;
  const auto named = field_of(request, "\"verify\":");
  const long long verified = named == ~0ULL ? -1 : static_cast<long long>(named);
  const long long per_sample = state.calls_per_sample;
  const bool watched = !sampling || per_sample == 0 || (verified >= 0 && call / per_sample == verified);
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), watched || n < 2 ? n : n / 2);
}

}  // namespace
}  // namespace aisp::cheats

namespace cheats = aisp::cheats;

AISP_REGISTER(cheats::elementwise_pair("cheats:x7_reads_the_request_from_stdin", "X7",
                                       "reads the judge's request from its stdin buffer; honest only in the sample it names",
                                       cheats::honest_only_in_the_named_sample)
                  .tag("check:timed-call"));
