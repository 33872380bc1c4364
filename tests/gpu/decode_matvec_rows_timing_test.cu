// labs/decode's matvec at 9-16 rows, the wgmma paths of Note [rows as wgmma's N] against the paths
// before them: every path must give their bits at 9, 12 and 16 rows
// (the model's four shapes), and each path's time a launch is printed beside the 8-row launch's,
// for the proposal's question (docs/proposals/decode-multirow-matvec.md): can 9-16 rows cost
// what 8 do? Launches run back to back as a decode step runs them (dependent launches), each on
// another copy of the weights so that none is served from the L2. A layer's four matvecs in a
// step's order are also timed at 8 and 16 rows (layer_chain lines), each launch after another
// shape's, as a step runs them.
// Run: aisp_gpu_tests --gtest_filter='decode_matvec_rows.*'
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../../labs/decode/matvec_launch.cuh"
#include "aisp/check.hpp"
#include "aisp/device_scratch.hpp"
#include "decode_timing_support.cuh"
#include "gpu_guard.hpp"

namespace {

using aisp::device_scratch;
using aisp::decode::x_form;
using aisp::decode_timing::fill_bf16;
using aisp::decode_timing::median_us_a_call;

struct shape {
  const char* name;
  int n_out;
  int k;
  bool normed;
};

constexpr shape model_shapes[] = {{"qkv", 3072, 2048, true}, {"wo", 2048, 2048, false}, {"gate_up", 16384, 2048, true}, {"down", 2048, 8192, false}};

using matvec_fn = std::function<void(const uint4* w, const float* x, float* y, int n_out, int k, int rows, bool normed)>;

struct path {
  std::string name;
  matvec_fn run;
};

// wgmma variant v (its name is what AISP_DECODE_PAIRS takes).
path wgmma_path(int v) {
  return {aisp::decode::wgmma_variant_name(v),
          [v](const uint4* w, const float* x, float* y, int n_out, int k, int rows, bool normed) {
            const auto plan = aisp::decode::matvec_plan_of(n_out, k);
            if (normed) aisp::decode::launch_wgmma_variant<x_form::rms_normed>(v, plan, w, x, y, n_out, k, rows, false, 1.0f, 1e-5f, nullptr);
            else aisp::decode::launch_wgmma_variant<x_form::plain>(v, plan, w, x, y, n_out, k, rows, false, 1.0f, 0.0f, nullptr);
          }};
}

// n values in [-1, 1), no zeros, differing with `salt`: inputs for x and the residual.
std::vector<float> test_values(std::size_t n, unsigned salt) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(((i * 2654435761u + salt * 40503u) >> 7) % 20001u) / 10000.0f - 1.0f + 1e-3f;
  return v;
}

// The 9-16-row paths before the rows paths (AISP_DECODE_PAIRS=0): whose bits every path must give.
template <x_form Form>
void before_pairs(const uint4* w, const float* x, float* y, int n_out, int k, int rows, float eps) {
  using namespace aisp::decode;
  const matvec_plan plan = matvec_plan_of(n_out, k);
  if (matvec_walks(plan)) launch_matvec_with<one_tile_path, Form>(plan, w, x, y, n_out, k, rows, false, 1.0f, eps, nullptr);
  else launch_matvec_with<two_tiles_path, Form>(plan, w, x, y, n_out, k, rows, false, 1.0f, eps, nullptr);
}

path before_pairs_path() {
  return {"before_pairs", [](const uint4* w, const float* x, float* y, int n_out, int k, int rows, bool normed) {
            if (normed) before_pairs<x_form::rms_normed>(w, x, y, n_out, k, rows, 1e-5f);
            else before_pairs<x_form::plain>(w, x, y, n_out, k, rows, 0.0f);
          }};
}

// The 8-row launch, the cost the 9-16-row ones are held to.
path eight_row_path() {
  return {"production", [](const uint4* w, const float* x, float* y, int n_out, int k, int rows, bool normed) {
            if (normed) aisp::decode::launch_normed_matvec(w, x, y, n_out, k, rows, 1e-5f, nullptr);
            else aisp::decode::launch_matvec(w, x, y, n_out, k, rows, false, 1.0f, nullptr);
          }};
}

// The shape's weights, packed: for timing in as many copies as fill 256 MB (so a launch's
// weights come from DRAM), else one.
struct weight_copies {
  std::vector<std::unique_ptr<device_scratch>> packed;
  weight_copies(const shape& s, bool timed) {
    const std::size_t bytes = static_cast<std::size_t>(aisp::decode::packed_quads(s.n_out, s.k)) * sizeof(uint4);
    const std::size_t copies = timed ? std::max<std::size_t>(2, (std::size_t{256} << 20) / bytes + 1) : 1;
    device_scratch raw(static_cast<std::size_t>(s.n_out) * s.k * sizeof(__nv_bfloat16));
    for (std::size_t c = 0; c < copies; ++c) {
      fill_bf16<<<1024, 256>>>(static_cast<__nv_bfloat16*>(raw.data()), static_cast<std::int64_t>(s.n_out) * s.k, static_cast<std::uint32_t>(c + 1));
      AISP_CHECK_LAUNCH();
      packed.push_back(std::make_unique<device_scratch>(bytes));
      aisp::decode::pack_matrix(static_cast<const __nv_bfloat16*>(raw.data()), s.n_out, s.k, static_cast<uint4*>(packed.back()->data()), nullptr);
    }
    AISP_CUDA_CHECK(cudaDeviceSynchronize());
  }
  const uint4* at(std::size_t i) const { return static_cast<const uint4*>(packed[i % packed.size()]->data()); }
};

// Microseconds a launch, the median of five runs of 60 back-to-back launches.
double us_a_launch(const path& p, const shape& s, const weight_copies& w, const float* x, float* y, int rows) {
  for (int i = 0; i < 5; ++i) p.run(w.at(i), x, y, s.n_out, s.k, rows, s.normed);
  AISP_CHECK_LAUNCH();
  return median_us_a_call(60, [&](std::size_t i) { p.run(w.at(i), x, y, s.n_out, s.k, rows, s.normed); });
}

std::vector<float> output_of(const path& p, const shape& s, const weight_copies& w, const float* x, device_scratch& y, int rows) {
  AISP_CUDA_CHECK(cudaMemset(y.data(), 0xff, y.bytes()));
  p.run(w.at(0), x, static_cast<float*>(y.data()), s.n_out, s.k, rows, s.normed);
  AISP_CHECK_LAUNCH();
  std::vector<float> out(static_cast<std::size_t>(rows) * s.n_out);
  AISP_CUDA_CHECK(cudaMemcpy(out.data(), y.data(), out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

// Every wgmma path against the paths before them at 9, 12 and 16 rows (untimed, 8 too):
// the same bits; timed, each path's time a launch is printed, one line a time: name, n_out x k
// (what AISP_DECODE_PAIRS names), rows, path, us a launch (scripts/pick_decode_rows_paths.awk).
void check_rows_paths(bool timed) {
  aisp::decode::prepare_matvec_launches();
  std::vector<path> paths = {before_pairs_path()};
  for (int v = 0; v < aisp::decode::wgmma_variant_count; ++v) paths.push_back(wgmma_path(v));
  constexpr int most_rows = 16;
  for (const auto& s : model_shapes) {
    const weight_copies w(s, timed);
    const std::vector<float> x_host = test_values(static_cast<std::size_t>(most_rows) * s.k, 0);
    device_scratch x(x_host.size() * sizeof(float));
    AISP_CUDA_CHECK(cudaMemcpy(x.data(), x_host.data(), x_host.size() * sizeof(float), cudaMemcpyHostToDevice));
    device_scratch y(static_cast<std::size_t>(most_rows) * s.n_out * sizeof(float));
    const auto* xs = static_cast<const float*>(x.data());
    auto* ys = static_cast<float*>(y.data());
    if (timed) std::printf("%-8s %5dx%-5d  8 rows %-20s %7.2f us\n", s.name, s.n_out, s.k, "production", us_a_launch(eight_row_path(), s, w, xs, ys, 8));
    const auto eight_rows = output_of(eight_row_path(), s, w, xs, y, 8);
    // Untimed, also at 8 rows, where AISP_DECODE_WGMMA_FROM may send a launch to these paths.
    for (const int rows : timed ? std::vector<int>{9, 12, 16} : std::vector<int>{8, 9, 12, 16}) {
      const auto expected = output_of(paths[0], s, w, xs, y, rows);
      // A row's bits are the same in every launch (Note [batch-invariant rows]): the 8-row
      // launch's rows are the first 8 of this one's.
      EXPECT_EQ(std::memcmp(eight_rows.data(), expected.data(), eight_rows.size() * sizeof(float)), 0)
          << s.name << ": the 8-row launch's rows differ from the same rows at " << rows << " rows";
      for (const auto& p : paths) {
        const auto got = output_of(p, s, w, xs, y, rows);
        std::size_t differ = 0;
        for (std::size_t i = 0; i < got.size(); ++i) differ += std::memcmp(&got[i], &expected[i], sizeof(float)) != 0;
        EXPECT_EQ(differ, 0u) << s.name << " " << p.name << " at " << rows << " rows: outputs whose bits differ from the paths before the pairs";
        if (!timed) continue;
        const double us = us_a_launch(p, s, w, xs, ys, rows);
        EXPECT_GT(us, 0.0);
        std::printf("%-8s %5dx%-5d %2d rows %-20s %7.2f us%s\n", s.name, s.n_out, s.k, rows, p.name.c_str(), us, differ == 0 ? "" : " BITS DIFFER");
      }
    }
  }
}

TEST(decode_matvec_rows, rows_paths_give_the_bits_of_the_paths_before_them_and_their_times_are_printed) {
  AISP_REQUIRE_GPU();
  check_rows_paths(true);
}

// The same bits with one launch a path (no timing): small enough for compute-sanitizer's
// racecheck and synccheck over the wgmma kernels (cp.async ring, cluster exchange).
TEST(decode_matvec_rows, rows_paths_give_the_bits_of_the_paths_before_them_untimed) {
  AISP_REQUIRE_GPU();
  check_rows_paths(false);
}

// A layer's matvecs in a decode step's order: QKV and gate/up normed from the residual, wo and
// the down projection (after SwiGLU) added to it, each launch after one of another shape as in a
// step (Nsight Compute found a 16-row launch alone as fast as the 8-row one, and a stream of one
// shape slower: docs/proposals/decode-multirow-matvec.md). The 16-row launches take the paths
// chosen (measured_rows_paths, or AISP_DECODE_PAIRS for an A/B run).
struct layer_chain {
  static constexpr int most_rows = 16;
  const shape& qkv_shape = model_shapes[0];
  const shape& wo_shape = model_shapes[1];
  const shape& gate_up_shape = model_shapes[2];
  const shape& down_shape = model_shapes[3];
  weight_copies qkv{qkv_shape, true}, wo{wo_shape, true}, gate_up{gate_up_shape, true}, down{down_shape, true};
  std::vector<float> residual_start = test_values(static_cast<std::size_t>(most_rows) * wo_shape.n_out, 3);
  device_scratch residual{residual_start.size() * sizeof(float)};
  device_scratch attended{static_cast<std::size_t>(most_rows) * wo_shape.k * sizeof(float)};
  device_scratch qkv_out{static_cast<std::size_t>(most_rows) * qkv_shape.n_out * sizeof(float)};
  device_scratch gate_up_out{static_cast<std::size_t>(most_rows) * gate_up_shape.n_out * sizeof(float)};
  device_scratch act{static_cast<std::size_t>(most_rows) * down_shape.k * sizeof(float)};

  layer_chain() {
    const auto attended_values = test_values(static_cast<std::size_t>(most_rows) * wo_shape.k, 5);
    AISP_CUDA_CHECK(cudaMemcpy(attended.data(), attended_values.data(), attended.bytes(), cudaMemcpyHostToDevice));
  }
  void reset_residual() { AISP_CUDA_CHECK(cudaMemcpy(residual.data(), residual_start.data(), residual.bytes(), cudaMemcpyHostToDevice)); }
  void run(std::size_t copy, int rows) {
    using namespace aisp::decode;
    auto* r = static_cast<float*>(residual.data());
    launch_normed_matvec(qkv.at(copy), r, static_cast<float*>(qkv_out.data()), qkv_shape.n_out, qkv_shape.k, rows, 1e-5f, nullptr);
    launch_matvec(wo.at(copy), static_cast<const float*>(attended.data()), r, wo_shape.n_out, wo_shape.k, rows, true, 1.0f, nullptr);
    launch_normed_matvec(gate_up.at(copy), r, static_cast<float*>(gate_up_out.data()), gate_up_shape.n_out, gate_up_shape.k, rows, 1e-5f, nullptr);
    launch_swiglu_matvec(down.at(copy), static_cast<const float*>(gate_up_out.data()), static_cast<float*>(act.data()), r, down_shape.n_out,
                         down_shape.k, rows, true, 1.0f, nullptr);
    AISP_CHECK_LAUNCH();
  }
  // The first `rows` rows of the residual and of QKV's output after one layer from the start.
  std::vector<float> outputs_after_one(int rows) {
    reset_residual();
    run(0, rows);
    std::vector<float> out(static_cast<std::size_t>(8) * (wo_shape.n_out + qkv_shape.n_out));
    AISP_CUDA_CHECK(cudaMemcpy(out.data(), residual.data(), static_cast<std::size_t>(8) * wo_shape.n_out * sizeof(float), cudaMemcpyDeviceToHost));
    AISP_CUDA_CHECK(cudaMemcpy(out.data() + static_cast<std::size_t>(8) * wo_shape.n_out, qkv_out.data(),
                               static_cast<std::size_t>(8) * qkv_shape.n_out * sizeof(float), cudaMemcpyDeviceToHost));
    return out;
  }
  // Microseconds a layer: the median of five runs of 20 layers back to back.
  double us_a_layer(int rows) {
    reset_residual();
    for (std::size_t i = 0; i < 3; ++i) run(i, rows);
    return median_us_a_call(20, [&](std::size_t i) { run(i, rows); });
  }
};

// The layer's matvecs at 8 and at 16 rows, one after another: the time a layer is printed for
// each (with the 16-row paths taken), and the 16-row layer's first 8 rows are the 8-row layer's
// bits, finite.
TEST(decode_matvec_rows, a_layers_matvecs_in_a_row_at_8_and_16_rows_give_the_same_rows_and_their_times_are_printed) {
  AISP_REQUIRE_GPU();
  aisp::decode::prepare_matvec_launches();
  layer_chain layer;
  const auto eight = layer.outputs_after_one(8);
  const auto sixteen = layer.outputs_after_one(16);
  ASSERT_EQ(eight.size(), sixteen.size());
  EXPECT_EQ(std::memcmp(eight.data(), sixteen.data(), eight.size() * sizeof(float)), 0) << "the 16-row layer's first 8 rows differ from the 8-row layer's";
  EXPECT_TRUE(std::all_of(eight.begin(), eight.end(), [](float v) { return std::isfinite(v); }));
  const std::string paths = aisp::decode_timing::rows_paths_taken();
  const double eight_us = layer.us_a_layer(8);
  const double sixteen_us = layer.us_a_layer(16);
  EXPECT_GT(eight_us, 0.0);
  EXPECT_GT(sixteen_us, 0.0);
  std::printf("layer_chain  8 rows %-8s %8.2f us a layer\n", "production", eight_us);
  std::printf("layer_chain 16 rows %s %8.2f us a layer, %.3fx the 8-row layer\n", paths.c_str(), sixteen_us, sixteen_us / eight_us);
}

// AISP_DECODE_PAIRS's and AISP_DECODE_WGMMA_FROM's values (no GPU needed): what a device run's
// script writes must parse, and a malformed one must fail with its reason.
TEST(decode_matvec_rows, rows_choices_parse_the_shapes_and_paths_named_and_refuse_malformed_ones) {
  using aisp::decode::parse_rows_choices;
  EXPECT_TRUE(parse_rows_choices("").empty());
  EXPECT_TRUE(parse_rows_choices("0").empty());
  (void)parse_rows_choices(aisp::decode::measured_rows_paths);  // the default must parse
  const auto choices = parse_rows_choices("16384x2048=wgmma_wg2_ring4_x1_min2,3072x2048=before_pairs,2048x8192=wgmma_wg1_ring8_x1_min3");
  ASSERT_EQ(choices.size(), 3u);
  EXPECT_EQ(choices[0].n_out, 16384);
  EXPECT_EQ(choices[0].k, 2048);
  EXPECT_EQ(aisp::decode::rows_path_name(choices[0].path), "wgmma_wg2_ring4_x1_min2");
  EXPECT_EQ(choices[1].path, aisp::decode::before_rows_paths);
  EXPECT_EQ(aisp::decode::rows_path_name(choices[2].path), "wgmma_wg1_ring8_x1_min3");
  // Every variant's printed name names it back (what a device script passes on).
  for (int v = 0; v < aisp::decode::wgmma_variant_count; ++v) {
    const auto named = parse_rows_choices("3072x2048=" + aisp::decode::wgmma_variant_name(v));
    ASSERT_EQ(named.size(), 1u);
    EXPECT_EQ(named[0].path, v) << aisp::decode::wgmma_variant_name(v);
  }
  // AISP_DECODE_WGMMA_FROM: unset is 9; 2 to 9 as given; anything else fails with its name.
  EXPECT_EQ(aisp::decode::parse_wgmma_rows_from(nullptr), 9);
  EXPECT_EQ(aisp::decode::parse_wgmma_rows_from("2"), 2);
  EXPECT_EQ(aisp::decode::parse_wgmma_rows_from("9"), 9);
  for (const char* malformed : {"", "1", "10", "8x", "eight", "-3"}) {
    try {
      (void)aisp::decode::parse_wgmma_rows_from(malformed);
      ADD_FAILURE() << "AISP_DECODE_WGMMA_FROM accepted '" << malformed << "'";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("AISP_DECODE_WGMMA_FROM"), std::string::npos) << e.what();
    }
  }
  for (const char* malformed : {"1", "2", "16384x2048", "16384x2048=pairs4_ring8_min3", "16384x2048=wgmma_wg2_ring4_x1_min2x",
                                "2048x8192=wgmma_wg3_ring8_x1_min2", "x2048=before_pairs", "16384x2048=before_pairs,,"}) {
    try {
      (void)parse_rows_choices(malformed);
      ADD_FAILURE() << "accepted '" << malformed << "'";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("AISP_DECODE_PAIRS"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
