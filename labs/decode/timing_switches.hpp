// labs/decode's timing switches: environment variables a device call sets for an A/B on one card,
// each read once, none on by default, a malformed value an error, never ignored.
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
// out wrong, which the probe says once on stderr.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "aisp/check.hpp"

namespace aisp::decode {
namespace {

enum class row_probe : unsigned { attention = 1, rope = 2, swiglu = 4, x = 8, stores = 16 };

struct row_probe_name {
  std::string_view name;
  row_probe probe;
};
constexpr row_probe_name row_probe_names[] = {{"attention", row_probe::attention},
                                              {"rope", row_probe::rope},
                                              {"swiglu", row_probe::swiglu},
                                              {"x", row_probe::x},
                                              {"stores", row_probe::stores}};

// The probes a value names, as bits of row_probe; nullptr or "" names none, an empty name (a
// stray comma) or an unknown one is an error.
inline unsigned parse_row_probes(const char* value) {
  if (value == nullptr || *value == '\0') return 0;
  unsigned probes = 0;
  std::string_view rest = value;
  for (;;) {
    const auto comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    unsigned bit = 0;
    for (const auto& known : row_probe_names) bit |= known.name == name ? static_cast<unsigned>(known.probe) : 0u;
    AISP_EXPECTS(bit != 0, "labs/decode: AISP_DECODE_PROBE_ROWS takes attention, rope, swiglu, x and stores, comma-separated, not '" +
                               std::string(name) + "'");
    probes |= bit;
    if (comma == std::string_view::npos) return probes;
    rest = rest.substr(comma + 1);
  }
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

// An on/off switch: unset or "0" off, "1" on, anything else an error naming the variable.
inline bool parse_on_off(const char* variable, const char* value) {
  const std::string_view given = value == nullptr ? "0" : value;
  AISP_EXPECTS(given == "0" || given == "1", std::string("labs/decode: ") + variable + " takes 0 or 1, not '" + std::string(given) + "'");
  return given == "1";
}

// AISP_DECODE_ATTENTION_EARLY=1: attention of several rows loads values before the softmax
// (Note [values before the softmax] in decoder_kernels.cuh: a few us a step either way, so off).
inline bool attention_values_early() {
  static const bool early = parse_on_off("AISP_DECODE_ATTENTION_EARLY", std::getenv("AISP_DECODE_ATTENTION_EARLY"));
  return early;
}

}  // namespace
}  // namespace aisp::decode
