// labs/decode's matvec launchers, what the model calls: a plain matvec, one with the RMS norm of
// its input and one with SwiGLU of it, each picking matvec_mma_kernel's path for its rows (one
// row, up to 8, up to 16, more). Every path gives a row the same bits (Note [batch-invariant rows]).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "aisp/check.hpp"
#include "aisp/dependent_launch.cuh"
#include "decode_matvec.cuh"
#include "timing_switches.hpp"
#include "rows_paths.cuh"

namespace aisp::decode {
namespace {

// The paths launch_matvec takes (measured: Notes [weights in shared memory], [staged rows]). A
// plan walks where a tile's warps fill its block and each walks two or more splits (the down
// projection): Depth 2 there, and x staged at 2-8 rows.
constexpr matvec_path one_row_path{.tiles = 1, .depth = 1, .min_blocks = 2, .one_row = true};
constexpr matvec_path one_row_walking_path{.tiles = 1, .depth = 2, .one_row = true};
constexpr matvec_path one_tile_path{.tiles = 1, .depth = 1, .min_blocks = 2};
constexpr matvec_path one_tile_walking_path{.tiles = 1, .depth = 2, .stage_x = true};
constexpr matvec_path two_tiles_path{.tiles = 2, .ring_chunks = 8, .min_blocks = 2};
// Note [walking rows in two blocks]: at 9-16 rows the down projection's 128 tiles ran one block
// of two 8-row tiles an SM (x staged, 188 registers): 8 warps an SM. As two blocks of one tile
// each (one_tile_path: x from L1 / L2, 124 registers, two blocks an SM; the second block's weights
// mostly from L2) the 16-row step took 1.390 / 1.387 -> 1.346 / 1.359 ms and the 12-row 1.327 /
// 1.338 -> 1.316 / 1.319, the logits' bits unchanged; with x staged (128 registers, a spill) it
// was slower, 1.434 / 1.438 (H200 GPU-1089d517, 2026-12-03, docs/results/issue21-h200-2026-12-02-to-04.md). Also wo
// (128 blocks) in two row blocks was slower: 16 rows 1.347 / 1.345 -> 1.358 / 1.361 (GPU-9354a5e4).
// (The fifth session, docs/results/issue21.md, measured the down alone in two row blocks at 40 us
// against 22, before packed weights, Note [packed weights]; why it now gains was not examined.)
constexpr matvec_path four_tiles_path{.tiles = 4};

template <matvec_path Path, x_form Form>
constexpr auto matvec_kernel_of =
    matvec_mma_kernel<Path.tiles, Form, Path.depth, Path.stage_x, Path.ring_chunks, Path.min_blocks, Path.one_row>;

[[nodiscard]] inline bool matvec_walks(const matvec_plan& plan) { return plan.tiles_a_block == 1 && plan.splits_a_warp >= 2; }

// Opts the launches with a ring in shared memory into their dynamic shared memory, on the
// current device; every launch_matvec of 9-16 rows needs it first (gpu_decoder's constructor
// calls it). Not in the launchers: a CUDA graph captures the launches, not this call.
inline bool& matvec_launches_prepared() {
  static bool prepared = false;
  return prepared;
}

inline void prepare_matvec_launches() {
  matvec_launches_prepared() = true;
  for (const auto kernel : {matvec_kernel_of<two_tiles_path, x_form::plain>, matvec_kernel_of<two_tiles_path, x_form::rms_normed>}) {
    AISP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, ring_bytes<two_tiles_path>));
  }
  prepare_wgmma_variants();
}

template <matvec_path Path, x_form Form>
void launch_matvec_with(const matvec_plan& plan, const uint4* w, const float* x, float* y, int n_out, int k, int rows,
                        bool accumulate, float output_scale, float eps, cudaStream_t stream) {
  if constexpr (Path.ring_chunks > 0) {
    AISP_EXPECTS(matvec_launches_prepared(), "labs/decode: call prepare_matvec_launches() before a matvec of 9-16 rows");
  }
  const int tiles = (n_out + matvec_tile_features - 1) / matvec_tile_features;
  const int row_blocks = (rows + Path.tiles * matvec_tile_rows - 1) / (Path.tiles * matvec_tile_rows);
  const dim3 grid(static_cast<unsigned>((tiles + plan.tiles_a_block - 1) / plan.tiles_a_block), static_cast<unsigned>(row_blocks));
  launch_dependent(matvec_kernel_of<Path, Form>, grid, dim3(matvec_block_warps * 32), static_cast<std::size_t>(ring_bytes<Path>), stream, w,
                   x, y, n_out, k, rows, accumulate, output_scale, eps, plan);
}

// One row, x in its form (Notes [norm as an output scale], [folded swiglu]).
template <x_form Form>
void launch_one_row(const uint4* w, const float* x, float* y, int n_out, int k, bool accumulate, float output_scale, float eps,
                    cudaStream_t stream) {
  const matvec_plan plan = matvec_plan_of(n_out, k);
  if (matvec_walks(plan)) {
    launch_matvec_with<one_row_walking_path, Form>(plan, w, x, y, n_out, k, 1, accumulate, output_scale, eps, stream);
  } else {
    launch_matvec_with<one_row_path, Form>(plan, w, x, y, n_out, k, 1, accumulate, output_scale, eps, stream);
  }
}

// y (rows, n_out) from x (rows, k) in its form (plain or normed) and w (n_out, k), as
// matvec_mma_kernel defines it: one tile of 8 rows a block up to 8 rows, two up to 16, four
// beyond (each weight chunk serves them all).
template <x_form Form>
void launch_matvec_of(const uint4* w, const float* x, float* y, int n_out, int k, int rows, bool accumulate, float output_scale, float eps,
                      cudaStream_t stream) {
  static_assert(Form != x_form::swiglu, "swiglu is folded at one row only");
  expect_matvec_shape(n_out, k, rows);
  const matvec_plan plan = matvec_plan_of(n_out, k);
  const bool walks = matvec_walks(plan);
  if (rows == 1) {
    launch_one_row<Form>(w, x, y, n_out, k, accumulate, output_scale, eps, stream);
  } else if (const int v = rows >= wgmma_rows_from() && rows <= 2 * matvec_tile_rows ? rows_path_for(n_out, k) : before_rows_paths;
             v != before_rows_paths) {
    AISP_EXPECTS(matvec_launches_prepared(), "labs/decode: call prepare_matvec_launches() before a matvec of 9-16 rows");
    launch_wgmma_variant<Form>(v, plan, w, x, y, n_out, k, rows, accumulate, output_scale, eps, stream);
  } else if (rows <= matvec_tile_rows) {
    if (walks) launch_matvec_with<one_tile_walking_path, Form>(plan, w, x, y, n_out, k, rows, accumulate, output_scale, eps, stream);
    else launch_matvec_with<one_tile_path, Form>(plan, w, x, y, n_out, k, rows, accumulate, output_scale, eps, stream);
  } else if (rows <= 2 * matvec_tile_rows) {
    // Note [walking rows in two blocks]: one_tile_path launches a block for each 8 rows.
    if (walks) launch_matvec_with<one_tile_path, Form>(plan, w, x, y, n_out, k, rows, accumulate, output_scale, eps, stream);
    else launch_matvec_with<two_tiles_path, Form>(plan, w, x, y, n_out, k, rows, accumulate, output_scale, eps, stream);
  } else {
    launch_matvec_with<four_tiles_path, Form>(plan, w, x, y, n_out, k, rows, accumulate, output_scale, eps, stream);
  }
}

inline void launch_matvec(const uint4* w, const float* x, float* y, int n_out, int k, int rows, bool accumulate,
                          float output_scale, cudaStream_t stream) {
  launch_matvec_of<x_form::plain>(w, x, y, n_out, k, rows, accumulate, output_scale, 0.0f, stream);
}

// y = W rms_norm(x) (no accumulation, output scale 1), the norm applied to each row's sum at any
// row count (Note [norm as an output scale]): no norm launch, and x read as it is. It replaced
// Note [folded norm] (the norm folded in at one row, each block scaling x by the row's scale
// before its dot products; a norm kernel into a `normed` copy at more rows).
inline void launch_normed_matvec(const uint4* w, const float* x, float* y, int n_out, int k, int rows, float eps, cudaStream_t stream) {
  launch_matvec_of<x_form::rms_normed>(w, x, y, n_out, k, rows, false, 1.0f, eps, stream);
}

// Note [folded swiglu]: y (+)= W swiglu(gate_up), gate_up (rows, 2 k). At one row each warp
// stages swiglu_value of its split's gate and up values (Note [staged x]), which spares a launch
// a layer and the act round trip; other row counts run swiglu_rows_kernel into `act`, then the
// matvec (at 9-16 rows the fold was slower: Note [rows as wgmma's N]).
inline void launch_swiglu_matvec(const uint4* w, const float* gate_up, float* act, float* y, int n_out, int k, int rows,
                                 bool accumulate, float output_scale, cudaStream_t stream) {
  expect_matvec_shape(n_out, k, rows);
  if (rows == 1) {
    launch_one_row<x_form::swiglu>(w, gate_up, y, n_out, k, accumulate, output_scale, 0.0f, stream);
    return;
  }
  const dim3 spans_of_rows(static_cast<unsigned>(probed_rows(row_probe::swiglu, rows)),  // Note [row probes]
                           static_cast<unsigned>((k + row_block_threads - 1) / row_block_threads));
  launch_dependent(swiglu_rows_kernel, spans_of_rows, dim3(row_block_threads), 0, stream, gate_up, act, k);
  launch_matvec(w, act, y, n_out, k, rows, accumulate, output_scale, stream);
}

}  // namespace
}  // namespace aisp::decode
