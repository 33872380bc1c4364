// l2_persisting_window: output[r][:] = values[r][:] + table[indices[r] % table_rows][:], rows of
// 8 fp32 (32 B, one L2 sector), a 16 MiB table gathered at random by 16.8M streamed rows.
// Baseline: the kernel as written; the table competes for L2 with 1.1 GB of streaming traffic.
// Optimized: the same kernel, launched on a stream whose access-policy window marks the table
// persisting in a 16 MiB L2 set-aside (cudaLimitPersistingL2CacheSize).
// Why faster: each table row is gathered 32 times per call. In the baseline, streaming lines push
// table lines out of the 50 MB L2 between reuses, so a share of the gathers go to HBM (ncu on a
// probe of this kernel: 967 MB of DRAM reads where 621 MB suffice). Persisting lines are evicted
// only by other persisting lines: after its first touch the table stays, and DRAM carries the
// stream only (621 MB with the window).
// H100: see README.
// Run: aisp bench run --targets ch02:l2_persisting_window
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>

#include "aisp/check.hpp"
#include "aisp/launch_shape.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::ch02 {
namespace {

// Workload: values (rows, 8) fp32, indices (rows,) int32 (a permutation of 0..rows-1, reduced
// modulo table_rows), table (table_rows, 8) fp32, output (rows, 8) fp32, all row-major. An
// embedding-style lookup fused with a streaming add (a per-token bias row, say).
// Napkin math: rows = 2^24, table_rows = 524288. Streamed: values 512 MiB + output 512 MiB +
// indices 64 MiB; table 16 MiB: 1.16 GB in all, ~385 us at 3.0 TB/s. 16.8M random 32 B gathers
// (32 per table row). The baseline adds ~350 MB of table misses from HBM: ~+100 us. Measured under
// aisp on the lent H100: ~604 us without the window, ~513 us with it (1.18x); with a 4 MiB table
// (always resident) the probe ran ~430 us, 88% of the copy ceiling: the kernel's own floor.
//
// Note [row = sector]: a row of 8 fp32 is exactly one 32 B sector, the unit in which L2 and HBM
// move data. A gather of a whole row wastes no sector bytes, so what the window changes is only
// where the sector comes from: L2 (persisting) or HBM (evicted). With 4-byte rows, the same probe
// was bound by the L2's request rate and the window saved DRAM bytes but no time.
//
// Note [cold timing]: the harness resets persisting lines and flushes L2 before every sample, so
// each call reads the table from HBM once (16 MiB, ~6 us). The gain comes from reuse inside one
// call: 32 gathers per row.
//
// Note [set-aside size]: the set-aside is min(table bytes, the device's maximum: 31.25 MB on the
// H100) and hitRatio = set-aside / table bytes, so the persisting lines never exceed their
// carve-out and thrash each other. At 16 MiB the whole table persists (hitRatio 1). Misses of the
// window's other share (none here) are marked streaming. The L2 outside the set-aside (~33 MB) is
// left to the streaming traffic, which needs none: it is read once. A 20 MiB table gave 1.20x but
// a lower optimized bandwidth (73% of the copy ceiling against 75%); above ~24 MiB the gain falls.

constexpr int row_floats = 8;  // one 32 B sector; Note [row = sector]
constexpr int vectors_per_row = row_floats / 4;
constexpr int block_threads = 256;
constexpr int vectors_in_flight = 4;

// One thread per float4, grid-stride, 4 float4s in flight: the index and value loads of all four
// are issued before the dependent gathers.
__global__ void gather_add_row_kernel(const float4* __restrict__ values,
                                      const int* __restrict__ indices,
                                      const float4* __restrict__ table, float4* __restrict__ output,
                                      std::int64_t num_vectors, unsigned int table_rows) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  std::int64_t v = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; v + (vectors_in_flight - 1) * stride < num_vectors; v += vectors_in_flight * stride) {
    float4 value[vectors_in_flight];
    int index[vectors_in_flight];
#pragma unroll
    for (int k = 0; k < vectors_in_flight; ++k) {
      value[k] = values[v + k * stride];
      index[k] = indices[(v + k * stride) / vectors_per_row];
    }
    float4 row[vectors_in_flight];
#pragma unroll
    for (int k = 0; k < vectors_in_flight; ++k) {
      const auto table_row = static_cast<unsigned int>(index[k]) % table_rows;
      row[k] = table[std::int64_t{table_row} * vectors_per_row + (v + k * stride) % vectors_per_row];
    }
#pragma unroll
    for (int k = 0; k < vectors_in_flight; ++k) {
      output[v + k * stride] = make_float4(value[k].x + row[k].x, value[k].y + row[k].y,
                                           value[k].z + row[k].z, value[k].w + row[k].w);
    }
  }
  for (; v < num_vectors; v += stride) {
    const float4 value = values[v];
    const auto table_row = static_cast<unsigned int>(indices[v / vectors_per_row]) % table_rows;
    const float4 row = table[std::int64_t{table_row} * vectors_per_row + v % vectors_per_row];
    output[v] = make_float4(value.x + row.x, value.y + row.y, value.z + row.z, value.w + row.w);
  }
}

// Both variants launch this; only the stream's access policy differs.
void launch_gather_add(run_context& ctx) {
  const std::int64_t rows = ctx.param("rows");
  const std::int64_t table_rows = ctx.param("table_rows");
  AISP_EXPECTS(table_rows >= 1 && table_rows <= std::numeric_limits<std::int32_t>::max(), "table_rows must fit an int32 index");
  for (const char* name : {"values", "table", "output"}) {
    AISP_EXPECTS(reinterpret_cast<std::uintptr_t>(ctx.buffer(name)) % alignof(float4) == 0,
                 "float4 accesses need 16-byte aligned buffers");
  }
  const std::int64_t num_vectors = rows * vectors_per_row;
  gather_add_row_kernel<<<wave_grid(num_vectors, block_threads), block_threads, 0, ctx.stream()>>>(
      ctx.as<const float4>("values"), ctx.as<const int>("indices"), ctx.as<const float4>("table"),
      ctx.as<float4>("output"), num_vectors, static_cast<unsigned int>(table_rows));
  AISP_CHECK_LAUNCH();
}

// ---- Baseline: plain launch, default L2 policy ----
void run_baseline(run_context& ctx) { launch_gather_add(ctx); }

// ---- Optimized: persisting access-policy window over the table ----
// Changed: setup() carves a persisting set-aside out of L2 and attaches a window covering the
// table to ctx.stream(); run() is the baseline's launch. Teardown undoes both.
struct persisting_window {
  std::size_t previous_limit = 0;  // the set-aside before setup, restored in teardown
};

void setup_optimized(run_context& ctx) {
  int device = 0;
  int max_persisting = 0;
  int max_window = 0;
  AISP_CUDA_CHECK(cudaGetDevice(&device));
  AISP_CUDA_CHECK(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device));
  AISP_CUDA_CHECK(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device));
  AISP_EXPECTS(max_persisting > 0 && max_window > 0, "the device has no persisting L2");
  const auto table_bytes =
      static_cast<std::size_t>(ctx.param("table_rows")) * row_floats * sizeof(float);
  AISP_EXPECTS(table_bytes <= static_cast<std::size_t>(max_window),
               "the table exceeds the largest access-policy window");

  auto& state = make_state<persisting_window>(ctx);
  AISP_CUDA_CHECK(cudaDeviceGetLimit(&state.previous_limit, cudaLimitPersistingL2CacheSize));
  const std::size_t set_aside = std::min(table_bytes, static_cast<std::size_t>(max_persisting));
  AISP_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, set_aside));

  cudaStreamAttrValue attribute{};
  attribute.accessPolicyWindow.base_ptr = ctx.buffer("table");
  attribute.accessPolicyWindow.num_bytes = table_bytes;
  // Note [set-aside size]
  attribute.accessPolicyWindow.hitRatio =
      std::min(1.0f, static_cast<float>(set_aside) / static_cast<float>(table_bytes));
  attribute.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attribute.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  AISP_CUDA_CHECK(
      cudaStreamSetAttribute(ctx.stream(), cudaStreamAttributeAccessPolicyWindow, &attribute));
}

void teardown_optimized(run_context& ctx) {
  const std::size_t previous_limit = state_of<persisting_window>(ctx).previous_limit;
  release_state<persisting_window>(ctx);
  cudaStreamAttrValue attribute{};
  attribute.accessPolicyWindow.num_bytes = 0;  // a zero-size window switches the policy off
  AISP_CUDA_CHECK(
      cudaStreamSetAttribute(ctx.stream(), cudaStreamAttributeAccessPolicyWindow, &attribute));
  AISP_CUDA_CHECK(cudaCtxResetPersistingL2Cache());  // persisting lines back to normal
  AISP_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, previous_limit));
}

void run_optimized(run_context& ctx) { launch_gather_add(ctx); }

[[nodiscard]] std::int64_t row_elements(const workload& w) { return w.get("rows") * row_floats; }
[[nodiscard]] std::int64_t table_elements(const workload& w) {
  return w.get("table_rows") * row_floats;
}

}  // namespace
}  // namespace aisp::ch02

AISP_REGISTER(
    aisp::pair("ch02:l2_persisting_window")
        .summary("streaming add of randomly gathered 32 B table rows: default L2 policy vs a "
                 "persisting access-policy window over the 16 MiB table")
        .benchmark_size({{"rows", std::int64_t{1} << 24}, {"table_rows", 524288}})
        .validation_size({{"rows", 1}, {"table_rows", 1}})
        .validation_size({{"rows", 7}, {"table_rows", 3}})
        .validation_size({{"rows", 65}, {"table_rows", 13}})
        .validation_size({{"rows", 1003}, {"table_rows", 257}})
        .validation_size({{"rows", 100003}, {"table_rows", 4099}})
        .held_out_size({{"rows", 300007}, {"table_rows", 65537}})
        .input("values", aisp::dtype::f32, aisp::ch02::row_elements)
        .input("indices", aisp::dtype::i32, [](const aisp::workload& w) { return w.get("rows"); },
               aisp::init_distribution::index_permutation)
        .input("table", aisp::dtype::f32, aisp::ch02::table_elements)
        .output("output", aisp::dtype::f32, aisp::ch02::row_elements)
        .exact_math()  // one add of two small integers per element: bitwise exact (X5)
        .allow_access_policy_window()  // the optimized variant's whole point (X4)
        .work([](const aisp::workload& w) {
          const double rows = static_cast<double>(w.get("rows"));
          const double table_rows = static_cast<double>(w.get("table_rows"));
          // values and output once each, indices once, the table once: 4 B per element.
          return aisp::work_amount{.bytes = 4.0 * (2.0 * 8.0 * rows + rows + 8.0 * table_rows),
                                   .flops = 8.0 * rows};
        })
        .reference([](aisp::reference_io& io) {
          const auto rows = static_cast<std::size_t>(io.param("rows"));
          const auto table_rows = static_cast<std::size_t>(io.param("table_rows"));
          const std::span<const double> values = io.input("values");    // (rows, 8)
          const std::span<const double> indices = io.input("indices");  // (rows,)
          const std::span<const double> table = io.input("table");      // (table_rows, 8)
          const std::span<double> output = io.output("output");         // (rows, 8)
          for (std::size_t r = 0; r < rows; ++r) {
            const auto source = static_cast<std::size_t>(indices[r]) % table_rows;
            for (std::size_t c = 0; c < 8; ++c) {
              output[r * 8 + c] = values[r * 8 + c] + table[source * 8 + c];
            }
          }
        })
        .tag("l2-persistence")
        .add_variant("baseline", "gather + add with the default L2 policy",
                     aisp::ch02::run_baseline)
        .add_variant(aisp::kit::with_state(
            "optimized",
            "persisting set-aside and access-policy window over the table, set on ctx.stream() "
            "in setup",
            aisp::ch02::run_optimized, aisp::ch02::setup_optimized,
            aisp::ch02::teardown_optimized)));
