// labs/decode's matvec, y (rows, n_out) from x (rows, k) fp32 and w (n_out, k) bf16, on the tensor
// cores for every row count (Note [tensor-core rows]): its order, its pieces and
// matvec_mma_kernel (matvec_launch.cuh has the launchers the model calls). The norm and SwiGLU
// of the input are folded in at one row (Notes [norm as an output scale], [folded swiglu]). Every
// matvec is a programmatic dependent launch (Note [weights before the wait]). The weights are
// read from their packed copy (Note [packed weights]), which pack_matrix makes.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "aisp/async_copy.cuh"
#include "aisp/check.hpp"
#include "aisp/dependent_launch.cuh"
#include "aisp/mma_sync.cuh"
#include "decoder_kernels.cuh"

namespace aisp::decode {
namespace {

// Note [tensor-core rows]
// A launch's cost must not grow with its rows while the weights' bytes bound it: that is what
// continuous batching, paged caches and speculation buy. The lab's first matvec summed in fp32 on
// the CUDA cores; at 16 rows it was bound by its FMAs and its x loads, a launch cost 1.35 ms +
// 0.13 ms a row (H200, 2026-11-29), and a fuller batch bought little. This one runs every row
// count on mma.sync m16n8k8 with tf32 operands and fp32 accumulators, and keeps fp32 accuracy: a
// bf16 weight is exact in tf32, and x is split into two tf32 pieces, hi = x with its low 13 bits
// cleared and lo = (x - hi) likewise (x - hi is exact), so hi + lo holds x to 2^-21 of itself.
// The weights are the A operand (16 features an mma) and the rows the B operand (8 an mma), so a
// decode step of one row wastes 7 of 8 columns, not 15 of 16, and a lane splits the x of one row.
// A tile of 16 features is few warps at one row (QKV, 3072 features: 192 tiles), so k runs in
// splits of 256 and up to eight warps share a tile, each with its split's 16 loads in flight.
// Measured at batch 1 (cuda_graph_step, H200, 2026-11-29), against the SIMT kernel's 1.03 ms a
// token: x as A 1.60 ms; w as A, splits of 1024, four warps a tile, 1.47 ms.
//
// The order (Note [batch-invariant rows]) depends on the shape alone: k runs in splits of matvec_split_k;
// in a split, a lane holds eight consecutive k of two weight rows (features g and g + 8, g =
// lane / 4) a chunk (a chunk: 32 k of 16 features), and the chunk's four mmas take its k in pairs:
// mma j the lane's k 2j and 2j + 1 as the m16n8k8 k positions lane % 4 and lane % 4 + 4, for the
// weights and for x alike (the same permutation of k, so the sum is the dot product). Mma j adds
// into accumulator j % 2 of each piece. A tensor core computes each output from its own row of A
// and column of B, so a row's bits never depend on the rows beside it. A split's total is (hi0 +
// hi1) + (lo0 + lo1); the splits' totals are added in split order (rounded adds), then scaled
// once. matvec_plan_of(n_out, k) fixes which warp takes which splits; the rows choose only how many
// 8-row tiles a block runs (1, 2 or 4) and how many blocks run them.
constexpr int matvec_block_warps = 8;      // the warps that may share a tile of 16 features
constexpr int matvec_split_k = 256;        // k a split: one batch of loads
constexpr int matvec_chunk_k = 32;         // k a chunk: 4 lanes x 8 values a weight row
constexpr int matvec_tile_features = 16;   // an mma's m
constexpr int matvec_tile_rows = 8;        // an mma's n
constexpr int matvec_loads_in_flight = matvec_split_k / matvec_chunk_k;  // chunks a lane loads before using any (two 16-byte loads each)

struct matvec_plan {
  int splits;         // ceil(k / matvec_split_k)
  int splits_a_warp;  // a warp's consecutive splits
  int warps_a_tile;   // the warps that share a tile of 16 features
  int tiles_a_block;  // tiles of 16 features a block
};

// Note [warps a tile]: a tile's splits go to as many warps as fill about target_warps warps in
// all (at most a block's, at most one a split), so that a large matvec runs a wave of warps that
// each walk several splits with the next split's loads in flight (Note [weight ring]), and a
// small one runs a warp a split. It depends on n_out and k, never on the rows (Note
// [batch-invariant rows]).
constexpr int matvec_target_warps = 2048;  // 16 warps an SM of a 132-SM H100 or H200

[[nodiscard]] __host__ __device__ inline matvec_plan matvec_plan_of(int n_out, int k) {
  const int splits = (k + matvec_split_k - 1) / matvec_split_k;
  const int tiles = (n_out + matvec_tile_features - 1) / matvec_tile_features;
  const int filling = matvec_target_warps / tiles;
  int warps = splits < matvec_block_warps ? splits : matvec_block_warps;
  if (filling < warps) warps = filling < 1 ? 1 : filling;
  const int splits_a_warp = (splits + warps - 1) / warps;
  const int warps_a_tile = (splits + splits_a_warp - 1) / splits_a_warp;
  return {splits, splits_a_warp, warps_a_tile, matvec_block_warps / warps_a_tile};
}

inline void expect_matvec_shape(int n_out, int k, int rows) {
  AISP_EXPECTS(k % 8 == 0 && k > 0 && n_out > 0 && rows > 0, "labs/decode: a matvec of k % 8 == 0 and at least one row and feature");
}

// d += a · b on one 16 x 8 x 8 tile, tf32 operands (the bits of fp32 values whose low 13 bits are clear).
__device__ __forceinline__ void mma_tf32_1688(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

constexpr std::uint32_t tf32_mask = 0xffffe000u;

// Note [norm as an output scale]: W rms_norm(x) = s W x with s = 1 / sqrt(mean(x^2) + eps) a
// row's scalar (the model's gains are ones), so a normed matvec multiplies each row's sum by s
// instead of scaling x first, and no launch waits for a norm: a block needs s only when it stores.
// The sum of squares comes from the x its warps read anyway, in one order for every row count:
// each group of 8 consecutive x (a lane's eight of a chunk) summed in order from zero; a split's
// 32 groups in warp_sum's tree (group l meets l ^ 16, then ^ 8, ^ 4, ^ 2, ^ 1: the lanes that
// stage a split at one row hold one group each, and a lane of a multi-row launch holds groups q,
// q + 4, ..., q + 28 of its row, pairing them in the same tree before its shuffles); then the
// splits in the order the dot products' totals add (a warp's, then the tile's warps in order).
// So every row count gives a row the same s and the same bits.
__device__ __forceinline__ float group_squares(const float (&values)[8]) {
  float sum = 0.0f;
#pragma unroll
  for (int e = 0; e < 8; ++e) sum = __fmaf_rn(values[e], values[e], sum);
  return sum;
}

// x's two tf32 pieces (Note [tensor-core rows]): hi, x with its low 13 bits cleared, and lo, the
// rest likewise.
__device__ __forceinline__ std::uint32_t tf32_hi(float value) { return __float_as_uint(value) & tf32_mask; }
__device__ __forceinline__ std::uint32_t tf32_lo(float value, std::uint32_t hi) {
  return __float_as_uint(__fsub_rn(value, __uint_as_float(hi))) & tf32_mask;
}

// What a matvec reads as its x: x itself; x, each row's sum then scaled by the row's RMS scale
// (Note [norm as an output scale]); or swiglu of a (rows, 2k) gate_up, silu(gate) up (Note
// [folded swiglu]), made where x is staged (Note [staged x]), at one row.
enum class x_form { plain, rms_normed, swiglu };

// Eight consecutive x of a row (zeros past the rows or past the split) as hi and lo tf32 pieces;
// returns their sum of squares in order (Note [norm as an output scale]).
__device__ __forceinline__ float x_pieces(const float* x, int row, int rows, int k, int at, bool in_split, std::uint32_t (&hi)[8],
                                          std::uint32_t (&lo)[8]) {
  float4 a = make_float4(0.f, 0.f, 0.f, 0.f);
  float4 b = a;
  if (row < rows && in_split) {
    const auto* v = reinterpret_cast<const float4*>(x + static_cast<std::int64_t>(row) * k + at);
    a = v[0];
    b = v[1];
  }
  const float values[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    hi[e] = tf32_hi(values[e]);
    lo[e] = tf32_lo(values[e], hi[e]);
  }
  return group_squares(values);
}

// A tile's accumulators: [piece][mma j % 2], each an m16n8 fragment.
using matvec_acc = float[2][2][4];

// The tf32 A fragment of two bf16 pairs, k 2j and 2j + 1 of rows g (top) and g + 8 (bottom): a
// word's low half is k 2j, its high half k 2j + 1, each as fp32 bits (bf16 is fp32's top half).
struct tf32_a_fragment {
  std::uint32_t words[4];
};
__device__ __forceinline__ tf32_a_fragment tf32_a_of_bf16_pairs(std::uint32_t top, std::uint32_t bottom) {
  return {{top << 16, bottom << 16, top & 0xffff0000u, bottom & 0xffff0000u}};
}

// One chunk of one tile: the lane's eight k of weight rows g and g + 8 (top, bottom) against its
// eight x in pieces.
__device__ __forceinline__ void mma_chunk_pieces(const uint4& top, const uint4& bottom, const std::uint32_t (&hi)[8],
                                                 const std::uint32_t (&lo)[8], float (&acc)[2][2][4]) {
  const std::uint32_t top_words[4] = {top.x, top.y, top.z, top.w};
  const std::uint32_t bottom_words[4] = {bottom.x, bottom.y, bottom.z, bottom.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const auto a = tf32_a_of_bf16_pairs(top_words[j], bottom_words[j]);
    const std::uint32_t b_hi[2] = {hi[2 * j], hi[2 * j + 1]};
    const std::uint32_t b_lo[2] = {lo[2 * j], lo[2 * j + 1]};
    mma_tf32_1688(acc[0][j % 2], a.words, b_hi);
    mma_tf32_1688(acc[1][j % 2], a.words, b_lo);
  }
}

// One chunk of one tile at one row against the split's staged pieces (Note [staged pieces]):
// `pieces` holds the split's hi words, then its lo words. Note [one row, both pieces]: at one
// row B's column 0 (lanes 0-3) takes hi and column 1 (lanes 4-7) lo, so one mma does what the
// hi and the lo mma did: D[f][0] is the hi product, D[f][1] the lo one, each computed from its
// own column as before (the premise of Note [batch-invariant rows]), so the bits are unchanged
// and a chunk takes 4 mmas, not 8. `merged[j % 2]` gets mma j: c0 and c1 feature g's hi and lo,
// c2 and c3 feature g + 8's; unmerge_one_row puts them where the split's adds read them. The
// batch-1 step in a graph 0.753 / 0.755 -> 0.711 / 0.709 ms, every logit's bits unchanged at 1-16
// rows; the one-row launches alone 1,028 -> 981 us a step (Nsight Compute; H200 GPU-54196981,
// 2026-12-03, docs/results/issue21-h200-2026-12-02-to-04.md). The launches of 2-16 rows, no longer built with the
// one-row path's branches (matvec_path::one_row), took 2.6-2.8% off their steps as well.
__device__ __forceinline__ void mma_chunk_one_row(const uint4& top, const uint4& bottom, const std::uint32_t* pieces, bool in_split, int at,
                                                  float (&merged)[2][4]) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const bool mine = lane < 8 && in_split;
  const std::uint32_t* piece = pieces + (lane >= 4 ? matvec_split_k : 0) + at;
  const std::uint32_t top_words[4] = {top.x, top.y, top.z, top.w};
  const std::uint32_t bottom_words[4] = {bottom.x, bottom.y, bottom.z, bottom.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint2 b = mine ? *reinterpret_cast<const uint2*>(piece + 2 * j) : make_uint2(0, 0);
    const auto a = tf32_a_of_bf16_pairs(top_words[j], bottom_words[j]);
    const std::uint32_t b_pair[2] = {b.x, b.y};
    mma_tf32_1688(merged[j % 2], a.words, b_pair);
  }
}

// The merged accumulators of Note [one row, both pieces] as a tile's [piece][j % 2][i] (rows 1
// and up, never stored, zero).
__device__ __forceinline__ void unmerge_one_row(const float (&merged)[2][4], float (&acc)[2][2][4]) {
#pragma unroll
  for (int jp = 0; jp < 2; ++jp) {
    acc[0][jp][0] = merged[jp][0];
    acc[1][jp][0] = merged[jp][1];
    acc[0][jp][2] = merged[jp][2];
    acc[1][jp][2] = merged[jp][3];
    acc[0][jp][1] = acc[1][jp][1] = acc[0][jp][3] = acc[1][jp][3] = 0.0f;
  }
}

// One chunk against Tiles tiles of 8 rows, each lane's x read from `x` and split; `squares[t]`
// gets the sum of squares of the lane's eight x of tile t.
template <int Tiles>
__device__ __forceinline__ void mma_chunk(const uint4& top, const uint4& bottom, const float* x, int first_row, int rows, int k, int at,
                                          bool in_split, matvec_acc (&acc)[Tiles], float (&squares)[Tiles]) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
#pragma unroll
  for (int t = 0; t < Tiles; ++t) {
    std::uint32_t hi[8], lo[8];
    squares[t] = x_pieces(x, first_row + t * matvec_tile_rows + lane / 4, rows, k, at, in_split, hi, lo);
    mma_chunk_pieces(top, bottom, hi, lo, acc[t]);
  }
}

// A split's sum of squares of a row from a lane's groups (Note [norm as an output scale]): the
// lane of a multi-row launch holds groups q + 4u of its row in paired[u % 4] as
// pair_groups_of_split adds them (u + 4 onto u), then this finishes warp_sum's tree.
__device__ __forceinline__ float split_squares(const float (&paired)[4]) {
  float total = __fadd_rn(__fadd_rn(paired[0], paired[2]), __fadd_rn(paired[1], paired[3]));
  total = __fadd_rn(total, __shfl_xor_sync(0xffffffffu, total, 2));
  return __fadd_rn(total, __shfl_xor_sync(0xffffffffu, total, 1));
}

// Chunk u's group (lane l = 4u + q of a split) into the tree's first level: group l + 16 onto l.
__device__ __forceinline__ void pair_groups_of_split(float (&paired)[4], int u, float group) {
  paired[u % 4] = u < 4 ? group : __fadd_rn(paired[u % 4], group);
}

// The rounded end of a row's sum: scaled, then stored or added. Rounded intrinsics: a plain
// `*out + sum * scale` may be contracted into an FMA in one kernel and not in another.
__device__ __forceinline__ void store_matvec(float* out, float total, float scale, bool accumulate) {
  const float scaled = __fmul_rn(total, scale);
  *out = accumulate ? __fadd_rn(*out, scaled) : scaled;
}

// A power-of-two output_scale scales the rounded 1/sqrt(k) exactly: 1 leaves it as it was.
__device__ __forceinline__ float matvec_scale(float output_scale, int k) { return output_scale / sqrtf(static_cast<float>(k)); }

// A normed row's s from its sum of squares (Note [norm as an output scale]): one expression for
// every path, so every path gives it the same bits.
__device__ __forceinline__ float row_rms_scale(float squares, int k, float eps) { return 1.0f / sqrtf(squares / static_cast<float>(k) + eps); }

// A warp's tile of 16 features x 8 rows (rows first_row ..) from its totals (accumulator i:
// feature g (+ 8 for i >= 2), row 2 (lane % 4) + i % 2 of the tile), each normed row scaled by
// its s (rms_scale's expression) from `squares`, the lane's row's sum of squares: rows past
// `rows` and features past n_out are not stored.
template <bool Normed>
__device__ __forceinline__ void store_row_tile(float* y, const float (&total)[4], float squares, int first_feature, int first_row, int rows,
                                               int n_out, int k, float scale, float eps, bool accumulate) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  // A normed row's s, held by its lanes 4r .. 4r + 3 (at one row, by all).
  const float row_scale = Normed ? row_rms_scale(squares, k, eps) : 1.0f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int feature = first_feature + lane / 4 + (i >= 2 ? 8 : 0);
    const int tile_row = 2 * (lane % 4) + i % 2;
    const int row = first_row + tile_row;
    float sum = total[i];
    if constexpr (Normed) sum = __fmul_rn(sum, __shfl_sync(0xffffffffu, row_scale, 4 * tile_row));
    if (row < rows && feature < n_out) store_matvec(y + static_cast<std::int64_t>(row) * n_out + feature, sum, scale, accumulate);
  }
}

__device__ __forceinline__ uint4 load_streaming(const uint4* address) {
  uint4 v;  // weights are read once a step: keep them out of L1, where x lives
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(address));
  return v;
}

// Note [packed weights]
// The matvec reads each weight where a lane's mma wants it: chunk u of a split, rows g and g + 8
// (g = lane / 4) of the tile, the lane's 16 bytes at k (lane % 4) * 8 + 32 u. Read from the
// row-major matrix, one load instruction of a warp is eight 64-byte pieces of eight rows, and
// DRAM served that pattern at 3.30 TB/s where the same bytes read 512 contiguous bytes an
// instruction streamed at 4.37 (the 1B model's MLP weights read by dependent launches in a graph,
// nothing else done; H200, 2026-12-02, docs/results/raw/issue21-2026-12-02-stream-experiment-source.cu.gz).
// So every call of a decode loop first copies the weights it is given into the order the lanes
// read them (pack_matrix, ~1 ms for the 1B model, timed with the loop): a (tile, split) is 8 KB
// contiguous, chunk u's top rows then its bottom rows, 512 bytes each, lane by lane; rows past
// n_out and k past its end are zeros (never stored, and production loaded zeros past k). A lane
// gets the same 16 bytes as before, so every sum and every bit is unchanged.
constexpr int packed_quads_a_split = matvec_loads_in_flight * 2 * 32;  // 16-byte words of a (tile, split): 8 KB

[[nodiscard]] __host__ __device__ inline std::int64_t packed_quads(int n_out, int k) {
  const std::int64_t tiles = (n_out + matvec_tile_features - 1) / matvec_tile_features;
  return tiles * ((k + matvec_split_k - 1) / matvec_split_k) * packed_quads_a_split;
}

// packed[((tile x splits + split) x 8 + u) x 64 + half x 32 + lane] = the lane's 8 weights of
// chunk u, row 16 tile + lane / 4 + 8 half (zeros past the matrix).
__global__ void pack_matrix_kernel(const __nv_bfloat16* w, int n_out, int k, uint4* packed) {
  const int splits = (k + matvec_split_k - 1) / matvec_split_k;
  const std::int64_t quads = packed_quads(n_out, k);
  for (std::int64_t q = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; q < quads; q += std::int64_t{gridDim.x} * blockDim.x) {
    const int lane = static_cast<int>(q % 32);
    const int half = static_cast<int>(q / 32 % 2);
    const int u = static_cast<int>(q / 64 % matvec_loads_in_flight);
    const std::int64_t item = q / packed_quads_a_split;
    const int split = static_cast<int>(item % splits);
    const std::int64_t row = item / splits * matvec_tile_features + lane / 4 + 8 * half;
    const int at = split * matvec_split_k + u * matvec_chunk_k + (lane % 4) * 8;
    packed[q] = row < n_out && at < k ? *reinterpret_cast<const uint4*>(w + row * k + at) : make_uint4(0, 0, 0, 0);
  }
}

// w (n_out, k) row-major bf16 into `packed` (packed_quads(n_out, k) words), on `stream`.
inline void pack_matrix(const __nv_bfloat16* w, int n_out, int k, uint4* packed, cudaStream_t stream) {
  constexpr int threads = 256;
  const std::int64_t blocks = std::min<std::int64_t>((packed_quads(n_out, k) + threads - 1) / threads, 8192);
  pack_matrix_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(w, n_out, k, packed);
  AISP_CHECK_LAUNCH();
}

// Chunk u of a split of the warp's tile (`tile`: its packed words), rows g and g + 8: the lane's eight k.
__device__ __forceinline__ void load_chunk(const uint4* tile, int split, int u, uint4& top, uint4& bottom) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const uint4* chunk = tile + static_cast<std::int64_t>(split) * packed_quads_a_split + u * 64;
  top = load_streaming(chunk + lane);
  bottom = load_streaming(chunk + 32 + lane);
}

// A split's weights: every chunk of it.
__device__ __forceinline__ void load_split(const uint4* tile, int split, uint4 (&top)[matvec_loads_in_flight],
                                           uint4 (&bottom)[matvec_loads_in_flight]) {
#pragma unroll
  for (int u = 0; u < matvec_loads_in_flight; ++u) load_chunk(tile, split, u, top[u], bottom[u]);
}

// Note [staged x]: at one row, a warp stages its split of x (in its form) in shared memory,
// two 16-byte loads a lane, where lanes 0-3 loaded each chunk's eight x inside the mma loop,
// each chunk another trip to L2: the batch-1 step 1.8-6.8% faster (H200, 2026-12-01).
// Note [x ahead of the weights]: a warp asks for the next split's x (cp.async into a second
// buffer, no registers held) as it starts a split, before its chunk loop asks for later weights.
// A load waits for the loads its warp asked for before it: the next split's x, asked for when
// that split started, waited for the weights the ring had asked for since (one split at Depth 1,
// two at Depth 2), and the warp had no loads in flight while it waited: Nsight Compute put 38%
// of the one-row down projection's stall samples on its x. Through L1 (.ca), since a row's x is
// every warp's of the SM: through L2 alone (.cg) the normed launches took 14.9 -> 17.0 us. The
// batch-1 step 0.773 -> 0.758 ms, bits unchanged (H200s, 2026-12-02, docs/results/issue21-h200-2026-12-02-to-04.md).
// Note [staged pieces]: the staged split holds x already in its two tf32 pieces (hi words, then
// lo words), made once a split by the lane that stages them, where every lane of the warp split
// its eight x again for each chunk (24 instructions a chunk, lanes 4-31 on zeros): the same
// pieces, so the bits are unchanged. Alone it bought nothing (the batch-1 step 0.753 / 0.755 ->
// 0.751 / 0.752 ms); Note [one row, both pieces] reads it.
template <x_form Form>
constexpr int raw_x_floats = matvec_split_k * (Form == x_form::swiglu ? 2 : 1);  // x of a split, or its gate then its up

// Issues the copies of the lane's eight x of `split` (and SwiGLU's eight up) into raw, zeros past
// k: one commit group.
template <x_form Form>
__device__ __forceinline__ void copy_split_x_async(const float* x, int k, int split, float* raw) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int at = split * matvec_split_k + lane * 8;
  const bool inside = at < k;  // k % 8 == 0: the lane's eight are all inside or all past k
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    ptx::cp_async_l1_zfill16(raw + lane * 8 + half * 4, inside ? x + at + half * 4 : x, inside ? 16 : 0);
    if constexpr (Form == x_form::swiglu) {
      ptx::cp_async_l1_zfill16(raw + matvec_split_k + lane * 8 + half * 4, inside ? x + k + at + half * 4 : x, inside ? 16 : 0);
    }
  }
  ptx::cp_async_commit();
}

// The lane's raw x of a split (its own copies, landed) in its form into the warp's staging
// buffer. Past k the copies are zeros, and so is swiglu(0, 0). Returns the split's sum of squares
// of x (Note [norm as an output scale]) for a normed matvec, else 0.
template <x_form Form>
__device__ __forceinline__ float stage_split_x(const float* raw, std::uint32_t* staged) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  __syncwarp();  // the last split's x is read
  const auto* v = reinterpret_cast<const float4*>(raw + lane * 8);
  const float4 a = v[0], b = v[1];
  const float read[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  float values[8];
  if constexpr (Form == x_form::swiglu) {
    const auto* u = reinterpret_cast<const float4*>(raw + matvec_split_k + lane * 8);
    const float4 c = u[0], d = u[1];
    const float up[8] = {c.x, c.y, c.z, c.w, d.x, d.y, d.z, d.w};
#pragma unroll
    for (int e = 0; e < 8; ++e) values[e] = swiglu_value(read[e], up[e]);
  } else {
#pragma unroll
    for (int e = 0; e < 8; ++e) values[e] = read[e];
  }
  std::uint32_t hi[8], lo[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    hi[e] = tf32_hi(values[e]);
    lo[e] = tf32_lo(values[e], hi[e]);
  }
  auto* out_hi = reinterpret_cast<uint4*>(staged + lane * 8);
  auto* out_lo = reinterpret_cast<uint4*>(staged + matvec_split_k + lane * 8);
  out_hi[0] = make_uint4(hi[0], hi[1], hi[2], hi[3]);
  out_hi[1] = make_uint4(hi[4], hi[5], hi[6], hi[7]);
  out_lo[0] = make_uint4(lo[0], lo[1], lo[2], lo[3]);
  out_lo[1] = make_uint4(lo[4], lo[5], lo[6], lo[7]);
  __syncwarp();
  if constexpr (Form == x_form::rms_normed) return warp_sum(group_squares(values));
  return 0.0f;
}

// Note [staged rows]: at more than one row, a warp copies x for its Tiles x 8 rows into shared
// memory (cp.async: no registers held), a stage of staged_rows_k values at a time, where each
// lane loaded its eight x of each chunk and tile from L1 or L2 inside the mma loop, a latency a
// chunk. Two buffers: the next stage's copies are in flight while a stage is used (one buffer,
// waiting for each stage, was measured slower and dropped). The row
// stride is the values plus 4, so each eight lanes' float4 reads (rows r and r + 1, columns 0, 8,
// 16, 24) fall on eight different 16-byte bank groups. The x read is the same value: the bits do
// not change. Kept only where a plan walks (matvec_walks: the down projection, k 8192), whose few
// warps waited on x a chunk: 2 rows 20.4 -> 14.7 us, 8 rows 20.7 -> 15.6, 16 rows 23.3 -> 21.9;
// but Note [walking rows in two blocks] took 9-16 rows off it.
// Elsewhere slower (gate-up at 8 rows 26.7 -> 45.6 us: a block's four tiles shared x in L1, and
// cp.async.cg fetches it from L2 for each warp) (H200s, 2026-12-02, raw
// docs/results/raw/issue21-h200-2026-12-02-matvec-rows-staged-and-ring.txt.gz).
template <int Tiles>
constexpr int staged_rows_k = 512 / (Tiles * matvec_tile_rows);  // a stage: 512 floats a warp
template <int Tiles>
constexpr int staged_rows_stride = staged_rows_k<Tiles> + 4;
template <int Tiles>
constexpr int staged_rows_floats = Tiles * matvec_tile_rows * staged_rows_stride<Tiles>;

// Issues the copies of rows first_row .. first_row + Tiles x 8 of x, values from .. from +
// staged_rows_k (zeros past the rows or past k), into staged at the row stride: one commit group.
template <int Tiles>
__device__ __forceinline__ void stage_rows_async(const float* x, int first_row, int rows, int k, int from, float* staged) {
  constexpr int quads_a_row = staged_rows_k<Tiles> / 4;
  constexpr int quads = Tiles * matvec_tile_rows * quads_a_row;
  static_assert(quads % 32 == 0 && staged_rows_k<Tiles> % matvec_chunk_k == 0, "a stage is whole chunks, whole quads a lane");
  const int lane = static_cast<int>(threadIdx.x) % 32;
#pragma unroll
  for (int quad = lane; quad < quads; quad += 32) {
    const int row = first_row + quad / quads_a_row;
    const int at = from + (quad % quads_a_row) * 4;
    const bool inside = row < rows && at < k;
    ptx::cp_async_zfill16(staged + (quad / quads_a_row) * staged_rows_stride<Tiles> + (quad % quads_a_row) * 4,
                          inside ? x + static_cast<std::int64_t>(row) * k + at : x, inside ? 16 : 0);
  }
  ptx::cp_async_commit();
}

// Note [weight ring]: a warp keeps Depth splits of weights in registers; a spent chunk's
// registers take the chunk Depth splits on at once, so a warp walking splits keeps Depth splits'
// bytes in flight while it computes. Depth 2 (where a tile's warps fill the block and there are
// few blocks: the down projection's 128) doubles a warp's bytes in flight at 1 block an SM. The
// depth changes when loads are issued, never the order of the adds. Measured and not kept:
// 16-warp blocks (the four matvecs of a layer 45.5 against 45.6 us, H200, 2026-12-02).
//
// Note [weights in shared memory]: two 8-row tiles a warp in registers (the weights' 64 and the
// accumulators' 32) took 168 registers, one block an SM, two waves for the QKV and gate-up
// launches: 9-16 rows cost 1.4-1.6x the 8-row launch. Those launches instead keep a ring of
// RingChunks chunks a warp in flight by cp.async into shared memory (1 KB a chunk), and read a
// chunk into registers only to use it: 106 registers, two blocks an SM. A lane copies exactly the
// 32 bytes it reads (rows g and g + 8 of the chunk, its eight k), so it waits for its own copies
// and needs no barrier; it copies chunk c + RingChunks into the slot after its mmas used chunk c.
// At 16 rows QKV 10.8 -> 7.5 us, gate-up 38.5 -> 32.6 (the 8-row launch: 6.6, 26.2); at 1-8
// rows the ring was 2-15% slower than registers, and the walking down projection gained
// nothing: both keep registers (H200 GPU-6e580b1b, 2026-12-02, the experiment
// docs/results/raw/issue21-2026-12-02-matvec-rows-experiments-source.cu.gz).

// How a launch holds its weights and x (the adds are the same in every path).
struct matvec_path {
  int tiles = 1;        // 8-row tiles a warp
  int depth = 1;        // splits of weights in registers (Note [weight ring]); 1 with a ring in shared memory
  bool stage_x = false; // x staged at more than one row (Note [staged rows]); else x from L1 / L2
  int ring_chunks = 0;  // weight chunks a warp in flight through shared memory (Note [weights in shared memory]); 0: registers
  int min_blocks = 1;   // blocks an SM asked of ptxas
  bool one_row = false; // a launch of one row: x staged a split at a time (Note [staged x]), in any form
};

template <matvec_path Path>
constexpr int ring_bytes = matvec_block_warps * Path.ring_chunks * matvec_tile_features * matvec_chunk_k * 2;

// Chunk c of a warp's walk (split first_split + c / 8) into its ring slot; one commit group,
// empty past the walk. The lane's two 16-byte copies are the two it reads (Note [weights in shared memory]).
template <int RingChunks>
__device__ __forceinline__ void issue_ring_chunk(uint4* ring, int c, int chunks, int first_split, const uint4* tile) {
  if (c < chunks) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const uint4* chunk =
        tile + static_cast<std::int64_t>(first_split + c / matvec_loads_in_flight) * packed_quads_a_split + (c % matvec_loads_in_flight) * 64;
    uint4* slot = ring + (c % RingChunks) * 2 * 32;
    ptx::cp_async_zfill16(slot + lane, chunk + lane, 16);
    ptx::cp_async_zfill16(slot + 32 + lane, chunk + 32 + lane, 16);
  }
  ptx::cp_async_commit();
}

// y[r, n] = (accumulate ? y[r, n] : 0) + output_scale sum_k x[r, k] w[n, k] / sqrt(k) (Note
// [weights as an input]; output_scale a power of two, Note [controlled acceptance]); k % 8 == 0.
// blockIdx.x: tiles_a_block tiles of 16 features; blockIdx.y: Tiles tiles of 8 rows. Form: x
// as it is, normed (Note [norm as an output scale]) or (at one row) swiglu'd on the way (Note [folded swiglu]).
// Launched as a dependent launch (Note [weights before the wait]), with Ring KB of dynamic
// shared memory a warp.
// The template's numbers are a matvec_path's (nvcc's launch stubs take no class-type parameters).
template <int Tiles, x_form Form, int Depth, bool StageX, int Ring, int MinBlocks, bool OneRow>
__global__ void __launch_bounds__(matvec_block_warps * 32, MinBlocks)
    matvec_mma_kernel(const uint4* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, int n_out, int k, int rows,
                      bool accumulate, float output_scale, float eps, matvec_plan plan) {
  static_assert(matvec_split_k == matvec_chunk_k * matvec_loads_in_flight, "a split is one batch of loads");
  static_assert(Ring == 0 || Depth == 1, "a ring in shared memory replaces the registers' depth");
  static_assert(Form != x_form::swiglu || OneRow, "a folded swiglu takes one row, staged");
  static_assert(!OneRow || (Tiles == 1 && !StageX && Ring == 0), "one row is one tile, its x staged a split at a time");
  __shared__ float warp_totals[matvec_block_warps][Tiles][4][32];
  constexpr bool normed = Form == x_form::rms_normed;  // Note [norm as an output scale]
  __shared__ float warp_squares[normed ? matvec_block_warps : 1][Tiles][32];
  extern __shared__ __align__(16) uint4 ring_slots[];
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int local_tile = warp / plan.warps_a_tile;
  const int part = warp % plan.warps_a_tile;
  const int first_feature = (static_cast<int>(blockIdx.x) * plan.tiles_a_block + local_tile) * matvec_tile_features;
  const bool works = local_tile < plan.tiles_a_block && first_feature < n_out;
  const int first_row = static_cast<int>(blockIdx.y) * Tiles * matvec_tile_rows;
  const int first_split = part * plan.splits_a_warp;
  const int end_split = works ? min(plan.splits, first_split + plan.splits_a_warp) : first_split;
  // Note [weights before the wait]: no kernel writes the weights, so a warp issues its first
  // splits' loads before it waits for the kernel before it (the one that writes x): the launch is
  // a dependent one (include/aisp/dependent_launch.cuh), so at one row those loads, most of the
  // launch, overlap that kernel's tail. Asking the L2 for the warp's later splits as well
  // (prefetch.global.L2) made the batch-1 step 7-10% slower (H200, 2026-12-01): not done.
  // The warp's tile in the packed weights (Note [packed weights]); a warp past the tiles loads nothing.
  const uint4* tile = w + static_cast<std::int64_t>(min(first_feature, n_out - 1) / matvec_tile_features) * plan.splits * packed_quads_a_split;
  uint4 top[Depth][matvec_loads_in_flight];
  uint4 bottom[Depth][matvec_loads_in_flight];
  uint4* ring = ring_slots + warp * Ring * 2 * 32;
  const int chunks = (end_split - first_split) * matvec_loads_in_flight;
  if constexpr (Ring > 0) {
#pragma unroll
    for (int c = 0; c < Ring; ++c) issue_ring_chunk<Ring>(ring, c, chunks, first_split, tile);
  } else {
#pragma unroll
    for (int d = 0; d < Depth; ++d) {
      if (first_split + d < end_split) load_split(tile, first_split + d, top[d], bottom[d]);
    }
  }
  ptx::let_next_kernel_start();
  ptx::wait_for_previous_kernel();
  constexpr bool staged = OneRow;  // x staged a split at a time (Note [staged x])
  __shared__ __align__(16) std::uint32_t staged_x[staged ? matvec_block_warps : 1][2 * matvec_split_k];  // Note [staged pieces]
  __shared__ __align__(16) float raw_x[staged ? matvec_block_warps : 1][2][staged ? raw_x_floats<Form> : 1];
  __shared__ __align__(16) float staged_rows[StageX ? matvec_block_warps : 1][2][StageX ? staged_rows_floats<Tiles> : 1];
  float squares[Tiles] = {};  // the lane's row's sum of squares over the warp's splits (normed)
  float total[Tiles][4] = {};
  int c = 0;  // the warp's chunks used (a ring in shared memory)
  if (staged && first_split < end_split) copy_split_x_async<Form>(x, k, first_split, raw_x[warp][0]);  // Note [x ahead of the weights]
  for (int first_of_round = first_split; first_of_round < end_split; first_of_round += Depth) {
#pragma unroll
    for (int d = 0; d < Depth; ++d) {
      const int s = first_of_round + d;
      if (s >= end_split) break;  // the same for the whole warp
      const int split_end = min(k, (s + 1) * matvec_split_k);
      matvec_acc acc[Tiles] = {};
      float merged[2][4] = {};  // Note [one row, both pieces]
      float paired[Tiles][4] = {};  // the split's groups of squares, paired (Note [norm as an output scale])
      if (staged) {
        if (s + 1 < end_split) {
          copy_split_x_async<Form>(x, k, s + 1, raw_x[warp][(s + 1 - first_split) % 2]);
          ptx::cp_async_wait<1>();
        } else {
          ptx::cp_async_wait<0>();
        }
        const float split_squares_of_x = stage_split_x<Form>(raw_x[warp][(s - first_split) % 2], staged_x[warp]);
        squares[0] = s == first_split ? split_squares_of_x : __fadd_rn(squares[0], split_squares_of_x);
      }
#pragma unroll
      for (int u = 0; u < matvec_loads_in_flight; ++u) {
        if (s * matvec_split_k + u * matvec_chunk_k >= split_end) break;  // the same for the whole warp
        const int at = s * matvec_split_k + u * matvec_chunk_k + (lane % 4) * 8;
        uint4 top_now;
        uint4 bottom_now;
        if constexpr (Ring > 0) {
          ptx::cp_async_wait<Ring - 1>();  // chunk c's group: every later one may be in flight
          const uint4* slot = ring + (c % Ring) * 2 * 32;
          top_now = slot[lane];
          bottom_now = slot[32 + lane];
        } else {
          top_now = top[d][u];
          bottom_now = bottom[d][u];
        }
        if (staged) {
          mma_chunk_one_row(top_now, bottom_now, staged_x[warp], at < split_end, at - s * matvec_split_k, merged);
        } else if constexpr (StageX && Form != x_form::swiglu) {
          constexpr int stage_k = staged_rows_k<Tiles>;
          constexpr int chunks_a_stage = stage_k / matvec_chunk_k;
          const int stage = (s - first_split) * (matvec_split_k / stage_k) + u / chunks_a_stage;
          const int stage_from = s * matvec_split_k + (u / chunks_a_stage) * stage_k;
          if (u % chunks_a_stage == 0) {
            __syncwarp();  // the buffer about to be written was read a stage ago
            if (stage == 0) stage_rows_async<Tiles>(x, first_row, rows, k, stage_from, staged_rows[warp][0]);
            if (stage_from + stage_k < end_split * matvec_split_k) {  // the next stage, its split the next
              stage_rows_async<Tiles>(x, first_row, rows, k, stage_from + stage_k, staged_rows[warp][(stage + 1) % 2]);
              ptx::cp_async_wait<1>();
            } else {
              ptx::cp_async_wait<0>();
            }
            __syncwarp();
          }
          float chunk_squares[Tiles];
          mma_chunk<Tiles>(top_now, bottom_now, staged_rows[warp][stage % 2], 0, rows - first_row, staged_rows_stride<Tiles>,
                           at - stage_from, at < split_end, acc, chunk_squares);
#pragma unroll
          for (int t = 0; t < Tiles; ++t) pair_groups_of_split(paired[t], u, chunk_squares[t]);
        } else if constexpr (Form != x_form::swiglu) {
          float chunk_squares[Tiles];
          mma_chunk<Tiles>(top_now, bottom_now, x, first_row, rows, k, at, at < split_end, acc, chunk_squares);
#pragma unroll
          for (int t = 0; t < Tiles; ++t) pair_groups_of_split(paired[t], u, chunk_squares[t]);
        }
        if constexpr (Ring > 0) {
          issue_ring_chunk<Ring>(ring, c + Ring, chunks, first_split, tile);  // after the mmas read the slot
          ++c;
        } else if (s + Depth < end_split) {
          load_chunk(tile, s + Depth, u, top[d][u], bottom[d][u]);  // Note [weight ring]
        }
      }
      if (staged) unmerge_one_row(merged, acc[0]);
      if constexpr (normed && !staged) {
#pragma unroll
        for (int t = 0; t < Tiles; ++t) {
          const float split_sum = split_squares(paired[t]);
          squares[t] = s == first_split ? split_sum : __fadd_rn(squares[t], split_sum);
        }
      }
#pragma unroll
      for (int t = 0; t < Tiles; ++t) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float split_total =
              __fadd_rn(__fadd_rn(acc[t][0][0][i], acc[t][0][1][i]), __fadd_rn(acc[t][1][0][i], acc[t][1][1][i]));
          total[t][i] = s == first_split ? split_total : __fadd_rn(total[t][i], split_total);
        }
      }
    }
  }
  if constexpr (Ring > 0 || StageX) ptx::cp_async_wait<0>();  // copies past k, never used
  if (plan.warps_a_tile > 1) {  // the tile's warps meet in shared memory; its first adds the others in order
    if (works) {
#pragma unroll
      for (int t = 0; t < Tiles; ++t) {
#pragma unroll
        for (int i = 0; i < 4; ++i) warp_totals[warp][t][i][lane] = total[t][i];
        if constexpr (normed) warp_squares[warp][t][lane] = squares[t];
      }
    }
    __syncthreads();
    if (!works || part != 0) return;
    for (int other = 1; other < plan.warps_a_tile; ++other) {
#pragma unroll
      for (int t = 0; t < Tiles; ++t) {
#pragma unroll
        for (int i = 0; i < 4; ++i) total[t][i] = __fadd_rn(total[t][i], warp_totals[warp + other][t][i][lane]);
        if constexpr (normed) squares[t] = __fadd_rn(squares[t], warp_squares[warp + other][t][lane]);
      }
    }
  }
  if (!works) return;
  const float scale = matvec_scale(output_scale, k);
#pragma unroll
  for (int t = 0; t < Tiles; ++t) {
    store_row_tile<normed>(y, total[t], squares[t], first_feature, first_row + t * matvec_tile_rows, rows, n_out, k, scale, eps, accumulate);
  }
}

}  // namespace
}  // namespace aisp::decode
