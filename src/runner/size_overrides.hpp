// `--size name=value[,name=value]` (bench run, bench scaling): parsed and checked against the
// chosen pairs before any work starts, so a typo or an impossible size is one line and exit 2.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/pair_runner.hpp"

namespace aisp {

// Each text is one or more comma-separated name=value; contract_error on anything else.
[[nodiscard]] std::map<std::string, std::int64_t> parse_size_overrides(const std::vector<std::string>& texts);

// Every requested pair has the overridden parameters, and its workers' buffers at that size fit
// in this machine's available host memory and the GPU's memory (`device_bytes`, when known);
// contract_error naming the pair and the size otherwise.
void check_size_overrides(const std::vector<pair_request>& requests, const run_config& config,
                          std::optional<std::uint64_t> device_bytes);

}  // namespace aisp
