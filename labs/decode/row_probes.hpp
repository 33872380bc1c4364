// labs/decode's row probes: which launches of a wider step cost its extra rows in a stream.
//
// Note [row probes]
// A timing probe, never a default. AISP_DECODE_PROBE_ROWS names launches (comma-separated:
// attention, rope, swiglu, x, stores) that a launch of more than 8 rows runs over its first 8
// rows only: attention's and the RoPE-and-cache launch's blocks, SwiGLU's, the wgmma matvecs'
// loads of x (rows 9-16 staged as zeros) or their stores (rows 9-16 not written). So
// decode_step.* shows, probe by probe, what a kernel's rows 9-16 cost in a stream, where Nsight
// Compute sees each launch alone (the two disagreed: docs/results/device-2026-12-06.md, fortieth
// and forty-first sessions). Every row is computed alone (Note [batch-invariant rows]), so rows
// 0-7 keep their bits and decode_step still compares them with the 8-row step's; rows 9-16 come
// out wrong, which the probe says once on stderr. A name it does not know is an error.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "aisp/check.hpp"

namespace aisp::decode {
namespace {

enum class row_probe : unsigned { attention = 1, rope = 2, swiglu = 4, x = 8, stores = 16 };

// The probes a value names, as bits of row_probe; nullptr or "" names none.
inline unsigned parse_row_probes(const char* value) {
  unsigned probes = 0;
  std::string_view rest = value == nullptr ? "" : value;
  while (!rest.empty() || probes != 0) {  // after a comma, an empty name is an error too
    const auto comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    unsigned bit = 0;
    if (name == "attention") bit = static_cast<unsigned>(row_probe::attention);
    if (name == "rope") bit = static_cast<unsigned>(row_probe::rope);
    if (name == "swiglu") bit = static_cast<unsigned>(row_probe::swiglu);
    if (name == "x") bit = static_cast<unsigned>(row_probe::x);
    if (name == "stores") bit = static_cast<unsigned>(row_probe::stores);
    AISP_EXPECTS(bit != 0, "labs/decode: AISP_DECODE_PROBE_ROWS takes attention, rope, swiglu, x and stores, comma-separated, not '" +
                               std::string(name) + "'");
    probes |= bit;
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return probes;
}

inline unsigned row_probes() {
  static const unsigned probes = [] {
    const char* value = std::getenv("AISP_DECODE_PROBE_ROWS");
    const unsigned parsed = parse_row_probes(value);
    if (parsed != 0) {
      std::fprintf(stderr, "labs/decode: AISP_DECODE_PROBE_ROWS=%s: launches of more than 8 rows compute rows 9-16 wrong (a timing probe)\n", value);
    }
    return parsed;
  }();
  return probes;
}

// The rows a launch of `rows` runs for `what`: its first 8 where probed (Note [row probes]).
inline int probed_rows(row_probe what, int rows) {
  constexpr int probed_to = 8;
  return rows > probed_to && (row_probes() & static_cast<unsigned>(what)) != 0 ? probed_to : rows;
}

}  // namespace
}  // namespace aisp::decode
