// A workload: the named integer parameters (sizes, batch, ...) of one run of a pair.
// The harness builds it from the pair's declaration; both variants receive the same one.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace aisp {

// Which declared size a workload is: the timed one, a validation one, or a held-out one.
enum class workload_kind : std::uint8_t { benchmark, validation, held_out };

struct workload {
  workload_kind kind = workload_kind::benchmark;
  std::map<std::string, std::int64_t, std::less<>> params;

  // Throws contract_error when the pair did not declare `name`.
  [[nodiscard]] std::int64_t get(std::string_view name) const;
  // "n=1024,m=7": stable, used in hashes and in reports.
  [[nodiscard]] std::string describe() const;
};

[[nodiscard]] std::string_view workload_kind_name(workload_kind kind);

}  // namespace aisp
