// l2_persisting_window: output[r][:] = values[r][:] + table[indices[r] % table_rows][:], rows of
// 32 fp32 (128 B, one L2 line), a 12 MiB table gathered at random by 4.2M streamed rows.
// Baseline: the kernel as written; the table competes for L2 with 1.1 GB of streaming traffic.
// Optimized: the same kernel, launched on a stream whose access-policy window marks the table
// persisting in a 12 MiB L2 set-aside (cudaLimitPersistingL2CacheSize).
// Why faster: each table row is gathered ~43 times per call. In the baseline, streaming lines
// push table lines out of the 50 MB L2 between reuses, so a share of the gathers go to HBM (ncu
// on a probe with 32 B rows and a 16 MiB table: 967 MB of DRAM reads where 621 MB suffice).
// Persisting lines are evicted only by other persisting lines: after its first touch the table
// stays, and DRAM carries the stream only.
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

// Workload: values (rows, row_floats) fp32, indices (rows,) int32 (a permutation of 0..rows-1,
// reduced modulo table_rows), table (table_rows, row_floats) fp32, output (rows, row_floats)
// fp32, all row-major; row_floats is 32 (benchmark) or 8. An embedding-style lookup fused with a
// streaming add (a per-token bias row, say).
// Napkin math: rows = 2^22, row_floats = 32, table_rows = 98304. Streamed: values 512 MiB +
// output 512 MiB + indices 16 MiB; table 12 MiB: 1.10 GB in all, ~368 us at 3.0 TB/s. 4.2M
// random 128 B gathers (~43 per table row). Measured under aisp on the lent H100: ~480 us
// without the window, ~410 us with it (1.17x, 89-90% of the copy ceiling).
//
// Note [row width]: rows are whole L2 lines (128 B) in the benchmark. A gather of a whole row
// wastes no sector bytes, so what the window changes is only where the row comes from: L2
// (persisting) or HBM (evicted). Narrower rows cost L2 requests: with 32 B rows (one sector,
// 2^24 rows, a 12 MiB table) the same kernel and window gained the same 1.18x but reached only
// 82% of the copy ceiling, and even a table that always hits (4 MiB) left it at 83%: the
// kernel's floor. With 4-byte rows an earlier probe was bound by the L2's request rate and the
// window saved DRAM bytes but no time. row_floats = 8 stays a validation width.
//
// Note [cold timing]: the harness resets persisting lines and flushes L2 before every sample, so
// each call reads the table from HBM once (12 MiB, ~4 us). The gain comes from reuse inside one
// call: ~43 gathers per row.
//
// Note [set-aside size]: the set-aside is min(table bytes, the device's maximum: 31.25 MB on the
// H100) and hitRatio = set-aside / table bytes, so the persisting lines never exceed their
// carve-out and thrash each other. Here the whole table persists (hitRatio 1). Misses of the
// window's other share (none here) are marked streaming. The L2 outside the set-aside is left to
// the streaming traffic, which needs none: it is read once. The table size was swept on the H100
// (128 B rows): 12 MiB 1.17x at 90% of the copy ceiling, 16 MiB 1.11x at 82%, 24 MiB 1.07x at
// 76%. Well under the 31.25 MB maximum the window already loses ground; a likely cause, not
// measured here, is that the H100's L2 is two partitions that can each hold a copy of a line.

constexpr int block_threads = 256;
constexpr int vectors_in_flight = 4;

// One thread per float4, grid-stride, 4 float4s in flight: the index and value loads of all four
// are issued before the dependent gathers.
template <int row_floats>
__global__ void gather_add_row_kernel(const float4* __restrict__ values,
                                      const int* __restrict__ indices,
                                      const float4* __restrict__ table, float4* __restrict__ output,
                                      std::int64_t num_vectors, unsigned int table_rows) {
  constexpr int vectors_per_row = row_floats / 4;
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
  const std::int64_t row_floats = ctx.param("row_floats");
  AISP_EXPECTS(row_floats == 8 || row_floats == 32,
               "row_floats must be 8 (a sector) or 32 (a line)");
  const std::int64_t num_vectors = rows * (row_floats / 4);
  const auto kernel = row_floats == 8 ? gather_add_row_kernel<8> : gather_add_row_kernel<32>;
  kernel<<<wave_grid(num_vectors, block_threads), block_threads, 0, ctx.stream()>>>(
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
      static_cast<std::size_t>(ctx.param("table_rows") * ctx.param("row_floats")) * sizeof(float);
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

[[nodiscard]] std::int64_t row_elements(const workload& w) {
  return w.get("rows") * w.get("row_floats");
}
[[nodiscard]] std::int64_t table_elements(const workload& w) {
  return w.get("table_rows") * w.get("row_floats");
}

}  // namespace
}  // namespace aisp::ch02

AISP_REGISTER(
    aisp::pair("ch02:l2_persisting_window")
        .summary("streaming add of randomly gathered 128 B table rows: default L2 policy vs a "
                 "persisting access-policy window over the 12 MiB table")
        .benchmark_size(
            {{"rows", std::int64_t{1} << 22}, {"table_rows", 98304}, {"row_floats", 32}})
        .validation_size({{"rows", 1}, {"table_rows", 1}, {"row_floats", 8}})
        .validation_size({{"rows", 7}, {"table_rows", 3}, {"row_floats", 32}})
        .validation_size({{"rows", 65}, {"table_rows", 13}, {"row_floats", 8}})
        .validation_size({{"rows", 1003}, {"table_rows", 257}, {"row_floats", 32}})
        .validation_size({{"rows", 100003}, {"table_rows", 4099}, {"row_floats", 8}})
        .validation_size({{"rows", 30011}, {"table_rows", 1031}, {"row_floats", 32}})
        .held_out_size({{"rows", 300007}, {"table_rows", 16411}, {"row_floats", 32}})
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
          const double row_floats = static_cast<double>(w.get("row_floats"));
          // values and output once each, indices once, the table once: 4 B per element.
          return aisp::work_amount{
              .bytes = 4.0 * (2.0 * row_floats * rows + rows + row_floats * table_rows),
              .flops = row_floats * rows};
        })
        .reference([](aisp::reference_io& io) {
          const auto rows = static_cast<std::size_t>(io.param("rows"));
          const auto table_rows = static_cast<std::size_t>(io.param("table_rows"));
          const auto width = static_cast<std::size_t>(io.param("row_floats"));
          const std::span<const double> values = io.input("values");    // (rows, width)
          const std::span<const double> indices = io.input("indices");  // (rows,)
          const std::span<const double> table = io.input("table");      // (table_rows, width)
          const std::span<double> output = io.output("output");         // (rows, width)
          for (std::size_t r = 0; r < rows; ++r) {
            const auto source = static_cast<std::size_t>(indices[r]) % table_rows;
            for (std::size_t c = 0; c < width; ++c) {
              output[r * width + c] = values[r * width + c] + table[source * width + c];
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
