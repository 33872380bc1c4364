#include "support/timestamp_counter.hpp"

#include <chrono>
#include <fstream>
#include <string>

namespace aisp {

namespace {

struct reading {
  std::uint64_t ticks;
  std::chrono::steady_clock::time_point at;
};

reading read_both() {
  const auto at = std::chrono::steady_clock::now();
  return {timestamp_counter(), at};
}

const reading at_load = read_both();

}  // namespace

bool timestamp_counter_is_invariant() {
  static const bool invariant = [] {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
      if (!line.starts_with("flags")) continue;
      const auto has = [&line](const char* flag) { return (line + " ").find(std::string(" ") + flag + " ") != std::string::npos; };
      return has("constant_tsc") && has("nonstop_tsc");
    }
    return false;
  }();
  return invariant && timestamp_counter() != 0;
}

double timestamp_counter_rate() {
  if (!timestamp_counter_is_invariant()) return 0;
  const reading now = read_both();
  const double seconds = std::chrono::duration<double>(now.at - at_load.at).count();
  if (seconds < 0.05) return 0;
  return static_cast<double>(now.ticks - at_load.ticks) / seconds;
}

}  // namespace aisp
