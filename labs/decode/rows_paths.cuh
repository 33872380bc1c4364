// labs/decode's 9-16-row matvec paths by shape: which path each of the model's matvecs takes at
// 9-16 rows (the wgmma paths of Note [rows as wgmma's N] as measured, or the path before them),
// and AISP_DECODE_PAIRS, which names them for an A/B run.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "aisp/check.hpp"
#include "decode_matvec.cuh"
#include "decode_matvec_wgmma.cuh"

namespace aisp::decode {
namespace {

// The 9-16-row paths by index: the wgmma variants (wgmma_variants), and the paths before them.
// (Until 2026-12-07 the pair variants of Note [rows over warps] were paths too: measured slower
// and removed, source in docs/results/raw/issue21-2026-12-07-rows-over-warps-source.cuh.gz.)
constexpr int before_rows_paths = -1;  // the paths before them (matvec_launch.cuh's two_tiles_path, one_tile_path)

inline std::string rows_path_name(int v) { return v == before_rows_paths ? "before_pairs" : wgmma_variant_name(v); }

// At 9-16 rows each shape takes its path as decode_matvec_rows.* measured it
// (measured_rows_paths), or as AISP_DECODE_PAIRS says for an A/B run (read once): "0" the paths
// before; "N_OUTxK=NAME,..." (NAME a rows_path_name; before_pairs the path before) that path for
// that shape, the path before for any other. A malformed value is an error, never ignored. (The
// variable keeps the name of the first such paths, Note [rows over warps]'s pairs of warps.)
struct rows_choice {
  int n_out;
  int k;
  int path;  // an index of wgmma_variants, or before_rows_paths
};
using rows_choices = std::vector<rows_choice>;

inline int rows_path_named(const std::string& name) {
  if (name == rows_path_name(before_rows_paths)) return before_rows_paths;
  for (int v = 0; v < wgmma_variant_count; ++v) {
    if (rows_path_name(v) == name) return v;
  }
  throw_contract_error("AISP_DECODE_PAIRS", "labs/decode: AISP_DECODE_PAIRS names no 9-16-row path '" + name + "'", __FILE__, __LINE__);
}

inline rows_choices parse_rows_choices(const std::string& value) {
  rows_choices choices;
  if (value.empty() || value == "0") return choices;
  std::istringstream items(value);
  for (std::string item; std::getline(items, item, ',');) {
    int n_out = 0;
    int k = 0;
    char name[64] = {};
    char extra = 0;
    const bool whole = std::sscanf(item.c_str(), "%dx%d=%63[a-z0-9_]%c", &n_out, &k, name, &extra) == 3;
    AISP_EXPECTS(whole && n_out > 0 && k > 0,
                 "labs/decode: AISP_DECODE_PAIRS takes 0 or N_OUTxK=PATH,... (PATH e.g. wgmma_wg2_ring8_x1_min2 or before_pairs), not '" + item +
                     "'");
    choices.push_back({n_out, k, rows_path_named(name)});
  }
  return choices;
}

// The model's shapes' paths as measured, in AISP_DECODE_PAIRS's form; any other shape takes the
// path before. decode_matvec_rows.* times each path's launch after the same launch (every path's
// bits equal the path before's) and a layer's four matvecs in a step's order (layer_chain: each
// launch after another shape's, as in a step), which decides: on H100 GPU-5b3fbc1a (2026-12-07)
// a 16-row layer took 64.1 us with every shape on the gather-and-prefetch variant, 64.6 on each
// shape's fastest launch alone, 66.1 on the gather alone, 73.8 on the paths before, against
// 59.8 for the 8-row layer. Alone a launch's times are within ~0.5 us of each other's for the
// three ring4 variants (QKV 8.1-8.5 us, wo 6.8-7.0, gate/up 27.6-28.2, down 18.0-19.5; the
// 8-row launch 7.1, 5.6, 26.3, 16.5). Continuous batching on the pick alone gave 2.235x at TPOT
// p99 0.883x static batching's there; 0.814x with the rows paths off.
constexpr const char* measured_rows_paths =
    "3072x2048=wgmma_wg2_ring4_x1_min2_gather_prefetch,2048x2048=wgmma_wg2_ring4_x1_min2_gather_prefetch,"
    "2048x8192=wgmma_wg2_ring4_x1_min2_gather_prefetch,16384x2048=wgmma_wg2_ring4_x1_min2_gather_prefetch";

inline const rows_choices& chosen_rows_paths() {
  static const rows_choices choices = [] {
    const char* value = std::getenv("AISP_DECODE_PAIRS");
    return parse_rows_choices(value == nullptr ? measured_rows_paths : value);
  }();
  return choices;
}

// The fewest rows the 9-16-row paths take: 9, or as AISP_DECODE_WGMMA_FROM says (2 to 9, read
// once) for an A/B run, so that a launch of fewer rows can be timed on them too. A 16-row path
// faster in a step than the 8-row one must also be tried at 8 rows, or the 8-row side (static
// batching's steps) is the weaker for it; decode_step.* at 8 rows on the default wgmma path cost
// 1,188 us against the 8-row path's 1,158 (H100 GPU-fb5e71f9, 2026-12-07). Their bits are every
// row count's (Note [batch-invariant rows]). A malformed value is an error, never ignored.
inline int parse_wgmma_rows_from(const char* value) {
  if (value == nullptr) return matvec_tile_rows + 1;
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  AISP_EXPECTS(end != value && *end == '\0' && parsed >= 2 && parsed <= matvec_tile_rows + 1,
               std::string("labs/decode: AISP_DECODE_WGMMA_FROM takes a row count from 2 to 9, not '") + value + "'");
  return static_cast<int>(parsed);
}

inline int wgmma_rows_from() {
  static const int from = parse_wgmma_rows_from(std::getenv("AISP_DECODE_WGMMA_FROM"));
  return from;
}

// The path a matvec of (n_out, k) takes at 9-16 rows: an index of wgmma_variants, or
// before_rows_paths.
inline int rows_path_for(int n_out, int k) {
  int chosen = before_rows_paths;
  for (const rows_choice& c : chosen_rows_paths()) {
    if (c.n_out == n_out && c.k == k) chosen = c.path;
  }
  return chosen;
}

}  // namespace
}  // namespace aisp::decode
