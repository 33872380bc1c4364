// tma_2d_pipeline: 5 x 5 stencil (weighted sum of the 25 neighbours, zero padding) over an fp32
// image (h, w), computed in 64 x 128 output tiles that each need a 68 x 132 input tile.
// Baseline: one block per tile loads its input tile with plain loads (one float per thread per
// step, zero where the halo leaves the image) into shared memory, meets at a barrier, computes,
// stores, exits.
// Optimized: persistent blocks (two per SM) walk the tiles with a 3-stage ring of 2D TMA loads:
// one thread issues cp.async.bulk.tensor.2d with a CUtensorMap for a 136 x 68 box per tile;
// the TMA unit computes the addresses, zero-fills the parts outside the image, and completes the
// bytes on the stage's mbarrier. The 255 other threads never load.
// Why faster: a plain-load tile costs every thread ~35 scalar load/store/index steps in batches
// of a few loads; with 6 blocks per SM (37 KB of shared memory each) that is at most ~30 KB per
// SM in flight while every block is loading, and less on average, since a block has none in
// flight while it computes, stores, exits and its successor starts: about what Little's law asks
// for (~20-30 KB), not more. The ring keeps up to 3 boxes (111 KB) per block in flight across
// the compute and stores of the tiles before them. HBM-bound: 2 x 231 MiB at 8448 x 7168,
// ~162 us at 3.0 TB/s. H100: see README.
// Run: aisp bench run --targets ch10:tma_2d_pipeline
#include <cuda.h>  // CUtensorMap only: aisp does not link libcuda (aisp/tensor_map_encoder.hpp)

#include <algorithm>
#include <cstdint>

#include "aisp/async_copy.cuh"
#include "aisp/check.hpp"
#include "aisp/launch_shape.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/tensor_map_encoder.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::ch10 {
namespace {

// Workload: image (h, w) fp32 row-major, weights (5, 5) fp32 row-major, output (h, w) fp32.
// output[y][x] = sum_{dy, dx in -2..2} weights[dy + 2][dx + 2] * image[y + dy][x + dx], with
// image = 0 outside [0, h) x [0, w).
// Napkin math: bytes = 4 h w read + 4 h w written (+ 100 B of weights), FLOPs = 50 h w.
// At 8448 x 7168: 462 MiB, ~162 us at 3.0 TB/s; 6.25 FLOP/byte, far below the ridge.
//
// Note [tile geometry]: a tile is 64 rows x 128 columns of output. Its input box starts at
// (x0 - 4, y0 - 2) and is 136 x 68 floats (36,992 bytes, a multiple of 128): the 2-column halo
// is rounded out to 4 so that the box's innermost start and extent are multiples of 16 bytes
// (an H100 TMA box whose innermost coordinate was not 16-byte aligned faulted; see ch07's
// README). Box column c holds image column x0 - 4 + c. A thread computes 4 columns x 8 rows:
// lane l columns 4l .. 4l + 3, warp r rows 8r .. 8r + 7; it reads 12 box rows as 3 float4s each
// (consecutive lanes, consecutive 16 bytes: conflict-free) and each input row feeds the up to 5
// output rows it touches, so every output still adds its 25 products in row-major tap order.
// Tall tiles halve the halo rows per output (68 / 64 input rows) and are the same in both
// variants. 8448 x 7168 is 132 x 56 = 7,392 tiles: exactly 28 for each of the 264 persistent
// blocks (2 per SM), so no block has a tile more than another.
//
// Note [tma ring]: stage s has one mbarrier full[s] (arrival count 1). Thread 0 arms it with
// mbarrier.arrive.expect_tx(36,992) and issues the box load, which completes that many bytes on
// full[s]: a box that hangs over the image edge still delivers all its bytes, zeros for the
// outside (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE). Local tile i uses stage i % 3 for the (i / 3)-th
// time; readers wait on parity (i / 3) & 1. After a tile's compute the block meets at a
// barrier, so nobody reads stage i % 3 again, and thread 0 refills it with local tile i + 3.
// Three 37 KB stages (111 KB) let two blocks share an SM's 228 KB.
// Only tiles that will be consumed are issued, so no copy is in flight at exit. No thread ever
// writes the ring, so no proxy fence is needed.
//
// Note [tensor map per call]: the CUtensorMap holds the image's address, and the harness may
// move buffers between calls, so run() encodes it every call (host only, ~1 us, no allocation)
// and passes it by value as a __grid_constant__ kernel parameter. cuTensorMapEncodeTiled is a
// driver API entry point: setup() fetches it with cudaGetDriverEntryPointByVersion, so the
// binary does not link libcuda.
//
// Note [vector path]: a tensor map's row stride must be a multiple of 16 bytes, so the TMA path
// needs w % 4 == 0 (the benchmark and held-out widths). Other widths run the baseline kernel in
// both variants: correct, not faster; the validation sizes cover both paths.
//
// Note [stencil tolerance]: every variant adds an output's 25 products with fmaf in the same
// order, so they agree bitwise. Against fp64 the j-th fmaf rounds a partial sum of at most j in
// magnitude (|w x| < 1): |error| <= u (1 + ... + 25) = 325 u = 1.94e-5, the declared atol
// (typical errors are ~3.5 u). Small-integer inputs are exact: |sum| <= 25 * 64.

constexpr int block_threads = 256;
constexpr int tile_rows = 64;
constexpr int tile_cols = 128;
constexpr int radius = 2;
constexpr int box_rows = tile_rows + 2 * radius;  // 68
constexpr int box_cols = tile_cols + 8;           // 136: halo rounded out to 16 bytes a side
constexpr int box_col_offset = 4;                 // box column of image column x0
constexpr int box_floats = box_rows * box_cols;
constexpr unsigned int box_bytes = box_floats * 4;  // 36,992
constexpr int ring_stages = 3;
constexpr int rows_per_thread = tile_rows / (block_threads / 32);  // 8
constexpr int taps = (2 * radius + 1) * (2 * radius + 1);
static_assert(box_bytes % 128 == 0, "every stage must start 128-byte aligned");
static_assert(tile_cols == 4 * 32 && tile_rows == rows_per_thread * (block_threads / 32),
              "4 columns x rows_per_thread rows per thread");

__device__ void load_weights(const float* __restrict__ weights, float (&out)[taps]) {
#pragma unroll
  for (int i = 0; i < taps; ++i) {
    out[i] = weights[i];
  }
}

// One tile from its box (see Note [tile geometry]). Vector: w % 4 == 0, float4 stores.
template <bool Vector>
__device__ void stencil_tile(const float* box, const float (&wts)[taps], float* __restrict__ output,
                             int h, int w, int y0, int x0) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int r0 = rows_per_thread * (static_cast<int>(threadIdx.x) / 32);
  const int c0 = 4 * lane;
  float acc[rows_per_thread][4] = {};
#pragma unroll
  for (int ir = 0; ir < rows_per_thread + 2 * radius; ++ir) {  // box row r0 + ir: image row
                                                                // y0 - 2 + r0 + ir
    const auto* row = reinterpret_cast<const float4*>(box + (r0 + ir) * box_cols + c0);
    const float4 a = row[0];
    const float4 b = row[1];
    const float4 d = row[2];
    // vals[k] = image column x0 - 4 + c0 + k; output column c0 + j, tap dx: k = j + dx + 2.
    const float vals[12] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, d.x, d.y, d.z, d.w};
#pragma unroll
    for (int orow = 0; orow < rows_per_thread; ++orow) {
      const int dy = ir - orow;
      if (dy < 0 || dy > 2 * radius) {
        continue;  // resolved at compile time
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int dx = 0; dx <= 2 * radius; ++dx) {
          acc[orow][j] = fmaf(wts[dy * (2 * radius + 1) + dx], vals[j + dx + 2], acc[orow][j]);
        }
      }
    }
  }
  const int gx = x0 + c0;
#pragma unroll
  for (int orow = 0; orow < rows_per_thread; ++orow) {
    const int gy = y0 + r0 + orow;
    if (gy >= h || gx >= w) {
      continue;
    }
    float* out = output + std::int64_t{gy} * w + gx;
    if constexpr (Vector) {
      *reinterpret_cast<float4*>(out) =
          make_float4(acc[orow][0], acc[orow][1], acc[orow][2], acc[orow][3]);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if (gx + j < w) {
          out[j] = acc[orow][j];
        }
      }
    }
  }
}

// ---- Baseline: one block per tile, plain loads ----
template <bool Vector>
__global__ void __launch_bounds__(block_threads)
    stencil5x5_plain_tiles_kernel(const float* __restrict__ image,
                                  const float* __restrict__ weights, float* __restrict__ output,
                                  int h, int w) {
  __shared__ __align__(16) float box[box_floats];
  float wts[taps];
  load_weights(weights, wts);
  const int x0 = static_cast<int>(blockIdx.x) * tile_cols;
  const int y0 = static_cast<int>(blockIdx.y) * tile_rows;
  // The 68 x 132 floats the tile reads (box columns 2 .. 133), row by row: a warp loads 32
  // consecutive floats of a row.
  constexpr int load_cols = tile_cols + 2 * radius;
  for (int idx = static_cast<int>(threadIdx.x); idx < box_rows * load_cols; idx += block_threads) {
    const int r = idx / load_cols;
    const int c = idx % load_cols;
    const int gy = y0 - radius + r;
    const int gx = x0 - radius + c;
    box[r * box_cols + c + box_col_offset - radius] =
        gy >= 0 && gy < h && gx >= 0 && gx < w ? image[std::int64_t{gy} * w + gx] : 0.0f;
  }
  __syncthreads();
  stencil_tile<Vector>(box, wts, output, h, w, y0, x0);
}

// ---- Optimized: persistent blocks, 3-stage ring of 2D TMA loads ----
// Changed: loads. Thread 0 copies each tile's 136 x 68 box with one cp.async.bulk.tensor.2d
// (address generation and edge zero-fill in the TMA unit), three tiles ahead; every thread
// waits on the stage's mbarrier, computes as before, and the block meets once per tile.
__global__ void __launch_bounds__(block_threads, 2)
    stencil5x5_tma_ring_kernel(const __grid_constant__ CUtensorMap image_map,
                               const float* __restrict__ weights, float* __restrict__ output,
                               int h, int w, int tiles_x, int num_tiles) {
  extern __shared__ unsigned char smem_raw[];
  // TMA writes stages at 128-byte aligned addresses: align the base by hand.
  const unsigned int raw = ptx::shared_address(smem_raw);
  float* ring = reinterpret_cast<float*>(smem_raw + (((raw + 127u) & ~127u) - raw));
  auto* full = reinterpret_cast<std::uint64_t*>(ring + ring_stages * box_floats);
  const bool issuer = threadIdx.x == 0;
  const auto first = static_cast<int>(blockIdx.x);
  const auto stride = static_cast<int>(gridDim.x);
  const auto issue = [&](int i) {  // local tile i into stage i % ring_stages
    const int tile = first + i * stride;
    const int s = i % ring_stages;
    ptx::mbarrier_arrive_expect_tx(&full[s], box_bytes);
    ptx::tma_load_2d(ring + s * box_floats, &image_map, (tile % tiles_x) * tile_cols - box_col_offset,
                (tile / tiles_x) * tile_rows - radius, &full[s]);
  };
  if (issuer) {
    for (int s = 0; s < ring_stages; ++s) {
      ptx::mbarrier_init(&full[s], 1);
    }
    ptx::fence_mbarrier_init();  // visible to TMA
  }
  __syncthreads();
  const int local_tiles = first < num_tiles ? (num_tiles - 1 - first) / stride + 1 : 0;
  if (issuer) {
    for (int i = 0; i < ring_stages && i < local_tiles; ++i) {
      issue(i);
    }
  }
  float wts[taps];
  load_weights(weights, wts);
  for (int i = 0; i < local_tiles; ++i) {
    const int tile = first + i * stride;
    const int s = i % ring_stages;
    ptx::mbarrier_wait_parity(&full[s], static_cast<unsigned int>(i / ring_stages) & 1u);
    stencil_tile<true>(ring + s * box_floats, wts, output, h, w, (tile / tiles_x) * tile_rows,
                       (tile % tiles_x) * tile_cols);
    __syncthreads();  // nobody reads stage s again until it is refilled
    if (issuer && i + ring_stages < local_tiles) {
      issue(i + ring_stages);
    }
  }
}

// ---- Launchers ----
[[nodiscard]] int tiles_along(int extent, int tile) { return (extent + tile - 1) / tile; }

// Note [vector path].
[[nodiscard]] bool use_tma_path(const run_context& ctx, int w) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return w % 4 == 0 && aligned(ctx.buffer("image")) && aligned(ctx.buffer("output"));
}

void launch_plain_tiles(run_context& ctx, bool vector_stores) {
  const auto h = static_cast<int>(ctx.param("h"));
  const auto w = static_cast<int>(ctx.param("w"));
  const dim3 grid(static_cast<unsigned int>(tiles_along(w, tile_cols)),
                  static_cast<unsigned int>(tiles_along(h, tile_rows)));
  AISP_EXPECTS(grid.y <= 65535, "h exceeds 65535 tiles of 64 rows (gridDim.y limit)");
  const auto* image = ctx.as<const float>("image");
  const auto* weights = ctx.as<const float>("weights");
  auto* output = ctx.as<float>("output");
  if (vector_stores) {
    stencil5x5_plain_tiles_kernel<true>
        <<<grid, block_threads, 0, ctx.stream()>>>(image, weights, output, h, w);
  } else {
    stencil5x5_plain_tiles_kernel<false>
        <<<grid, block_threads, 0, ctx.stream()>>>(image, weights, output, h, w);
  }
  AISP_CHECK_LAUNCH();
}

void launch_baseline(run_context& ctx) {
  launch_plain_tiles(ctx, use_tma_path(ctx, static_cast<int>(ctx.param("w"))));
}

constexpr int ring_smem_bytes = ring_stages * (static_cast<int>(box_bytes) + 8) + 128;

struct tma_state {
  tensor_map_encoder encode = nullptr;
  int blocks_per_wave = 0;
};

void setup_optimized(run_context& ctx) {
  auto& state = make_state<tma_state>(ctx);
  state.encode = tensor_map_encode_function();
  AISP_CUDA_CHECK(cudaFuncSetAttribute(stencil5x5_tma_ring_kernel,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       ring_smem_bytes));
  int blocks_per_sm = 0;
  AISP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks_per_sm, stencil5x5_tma_ring_kernel, block_threads, ring_smem_bytes));
  AISP_EXPECTS(blocks_per_sm >= 1, "the TMA ring block must fit on an SM");
  state.blocks_per_wave = blocks_per_sm * device_sm_count();
}

void launch_optimized(run_context& ctx) {
  const auto h = static_cast<int>(ctx.param("h"));
  const auto w = static_cast<int>(ctx.param("w"));
  if (!use_tma_path(ctx, w)) {  // Note [vector path]
    launch_plain_tiles(ctx, false);
    return;
  }
  const auto& state = state_of<tma_state>(ctx);
  // Note [tensor map per call]: (w, h) fp32, rows w * 4 bytes apart, 136 x 68 boxes.
  CUtensorMap image_map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(w), static_cast<cuuint64_t>(h)};
  const cuuint64_t row_stride[1] = {static_cast<cuuint64_t>(w) * sizeof(float)};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult encoded = state.encode(
      &image_map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<void*>(ctx.buffer("image")), dims,
      row_stride, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);  // OOB_FILL_NONE: out-of-bounds elements read as 0
  AISP_EXPECTS(encoded == CUDA_SUCCESS, "cuTensorMapEncodeTiled rejected the image map");
  const int tiles_x = tiles_along(w, tile_cols);
  const std::int64_t num_tiles = std::int64_t{tiles_x} * tiles_along(h, tile_rows);
  AISP_EXPECTS(num_tiles <= (std::int64_t{1} << 30), "tile index must fit an int");
  const auto grid =
      static_cast<unsigned int>(std::min<std::int64_t>(num_tiles, state.blocks_per_wave));
  stencil5x5_tma_ring_kernel<<<grid, block_threads, ring_smem_bytes, ctx.stream()>>>(
      image_map, ctx.as<const float>("weights"), ctx.as<float>("output"), h, w, tiles_x,
      static_cast<int>(num_tiles));
  AISP_CHECK_LAUNCH();
}

void teardown_optimized(run_context& ctx) { release_state<tma_state>(ctx); }

}  // namespace
}  // namespace aisp::ch10

AISP_REGISTER(
    aisp::pair("ch10:tma_2d_pipeline")
        .summary("5x5 stencil in 64x128 tiles: plain-load tile per block vs persistent 3-stage "
                 "TMA 2D tensor-map ring")
        .benchmark_size({{"h", 8448}, {"w", 7168}})
        .validation_size({{"h", 1}, {"w", 1}})
        .validation_size({{"h", 7}, {"w", 65}})
        .validation_size({{"h", 65}, {"w", 4}})
        .validation_size({{"h", 65}, {"w", 132}})
        .validation_size({{"h", 131}, {"w", 1028}})
        .validation_size({{"h", 200}, {"w", 1003}})
        .validation_size({{"h", 257}, {"w", 2052}})
        // Held out: 33 x 33 tiles, 4+ per persistent block, so the ring's refills and parity
        // flips run below the benchmark size (w % 4 == 0: the TMA path).
        .held_out_size({{"h", 2049}, {"w", 4100}})
        .input("image", aisp::dtype::f32, {"h", "w"})
        .input("weights", aisp::dtype::f32,
               [](const aisp::workload&) { return std::int64_t{aisp::ch10::taps}; })
        .output("output", aisp::dtype::f32, {"h", "w"})
        .exact_math()  // small integers: 25 products of at most 64, exact in fp32
        .work([](const aisp::workload& w) {
          const double pixels = static_cast<double>(w.get("h") * w.get("w"));
          return aisp::work_amount{.bytes = 8.0 * pixels + 4.0 * aisp::ch10::taps,
                                   .flops = 2.0 * aisp::ch10::taps * pixels};
        })
        .reference([](aisp::reference_io& io) {
          const std::int64_t h = io.param("h");
          const std::int64_t w = io.param("w");
          const std::span<const double> image = io.input("image");      // (h, w)
          const std::span<const double> weights = io.input("weights");  // (5, 5)
          const std::span<double> output = io.output("output");         // (h, w)
          for (std::int64_t y = 0; y < h; ++y) {
            for (std::int64_t x = 0; x < w; ++x) {
              double acc = 0.0;
              for (std::int64_t dy = -2; dy <= 2; ++dy) {
                for (std::int64_t dx = -2; dx <= 2; ++dx) {
                  const std::int64_t yy = y + dy;
                  const std::int64_t xx = x + dx;
                  if (yy >= 0 && yy < h && xx >= 0 && xx < w) {
                    acc += weights[static_cast<std::size_t>(5 * (dy + 2) + dx + 2)] *
                           image[static_cast<std::size_t>(yy * w + xx)];
                  }
                }
              }
              output[static_cast<std::size_t>(y * w + x)] = acc;
            }
          }
        })
        .tolerance_override(aisp::tolerance{
            .rtol = 1e-5,
            .atol = 2e-5,
            .max_rel_l2 = 1e-5,
            .reason = "25 fp32 fmaf per output against fp64: each rounds by at most u |partial| "
                      "with |partial| <= j, so |error| <= 325 u = 1.94e-5 (see Note [stencil "
                      "tolerance])"})
        .tag("tma")
        .tag("tensor-map")
        .tag("mbarrier")
        .tag("software-pipelining")
        .tag("persistent-kernel")
        .tag("stencil")
        .add_variant("baseline",
                     "one block per 64x128 tile: plain loads of the 68x132 input tile into shared "
                     "memory, barrier, compute",
                     aisp::ch10::launch_baseline)
        .add_variant(aisp::kit::with_state(
            "optimized",
            "persistent blocks, 3-stage ring of 136 x 68 TMA tensor-map boxes (hardware edge "
            "zero-fill), one mbarrier per stage",
            aisp::ch10::launch_optimized, aisp::ch10::setup_optimized, aisp::ch10::teardown_optimized)));
