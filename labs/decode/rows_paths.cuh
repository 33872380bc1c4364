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
// path before. Each shape's fastest path at 9, 12 and 16 rows, bits equal to the path before's
// (decode_matvec_rows.*, scripts/pick_decode_rows_paths.awk; H100 GPU-ce128fee, 2026-12-07, the
// first run of the gather_first variants): QKV 8.1-8.5 us against 9.3-9.4, wo 6.4-6.9 against
// 7.2, gate/up 27.1-27.8 against 31.6-32.4, down 17.5-18.4 against 19.6-20.0 (the 8-row launch:
// 7.2, 5.6, 25.4, 16.8). Gathering the parts first saved QKV 0.2 us and wo 0.05-0.24 on that
// card. Continuous batching on the paths before these (no gather): 2.211x at TPOT p99 0.905x
// static batching's, 0.852x with the rows paths off (the same card).
constexpr const char* measured_rows_paths =
    "3072x2048=wgmma_wg2_ring4_x1_min2_gather,2048x2048=wgmma_wg2_ring8_x1_min2_gather,2048x8192=wgmma_wg2_ring4_x1_min2,16384x2048=wgmma_wg2_ring4_x1_min2";

inline const rows_choices& chosen_rows_paths() {
  static const rows_choices choices = [] {
    const char* value = std::getenv("AISP_DECODE_PAIRS");
    return parse_rows_choices(value == nullptr ? measured_rows_paths : value);
  }();
  return choices;
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
