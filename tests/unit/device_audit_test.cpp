// The device audit without a GPU: window rules on synthetic CUPTI records, the cubin reader on
// a real relocatable cubin, and the judge's checks with their VALIDITY.md codes.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "audit/cubin_scan.hpp"
#include "audit/timeline_json.hpp"
#include "audit/window_audit.hpp"
#include "runner/timeline_checks.hpp"

namespace aisp {
namespace {

constexpr std::uint64_t us = 1000;  // CUPTI timestamps are nanoseconds

timeline_activity event_at(std::uint32_t correlation, std::uint64_t t) {
  return {activity_kind::event, "event", t, t, 0, 7, correlation};
}
timeline_activity kernel(std::string name, std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                         std::uint32_t stream = 7, std::uint32_t device = 0) {
  return {activity_kind::kernel, std::move(name), start, end, device, stream, correlation};
}

// A sample: start event (correlation 10) at 100 us, stop event (20) at 200 us.
sample_window window() {
  sample_window w;
  w.start_correlation = 10;
  w.stop_correlation = 20;
  return w;
}
std::vector<timeline_activity> with_events(std::vector<timeline_activity> records) {
  records.push_back(event_at(10, 100 * us));
  records.push_back(event_at(20, 200 * us));
  return records;
}

TEST(window_audit, an_honest_kernel_inside_the_window_is_clean_and_busy) {
  const auto a = audit_window(window(), with_events({kernel("copy", 12, 101 * us, 199 * us)}), 0, {});
  ASSERT_TRUE(a.complete);
  EXPECT_NEAR(a.window_s, 100e-6, 1e-12);
  EXPECT_EQ(a.kernels, 1);
  EXPECT_TRUE(a.escaped_kernels.empty());
  EXPECT_TRUE(a.foreign.empty());
  EXPECT_NEAR(a.busy_fraction, 0.98, 1e-9);
  EXPECT_EQ(a.kernel_names.count("copy"), 1u);
}

TEST(window_audit, a_side_stream_kernel_that_ends_after_the_stop_event_escaped) {
  const auto a = audit_window(window(), with_events({kernel("side", 12, 101 * us, 900 * us, 9)}), 0, {});
  ASSERT_EQ(a.escaped_kernels.size(), 1u);
  EXPECT_NEAR(a.overrun_s, 700e-6, 1e-12);
}

// Note [launch gate]: the gate holds the harness's stream only; a kernel run() put on a stream
// of its own runs while the window waits behind the gate, and may end before the window opens.
TEST(window_audit, a_side_stream_kernel_that_ran_before_the_start_event_escaped) {
  const auto a = audit_window(window(), with_events({kernel("side", 12, 40 * us, 90 * us, 9)}), 0, {});
  ASSERT_EQ(a.escaped_kernels.size(), 1u);
  EXPECT_NEAR(a.overrun_s, 60e-6, 1e-12);
  const auto on_time = audit_window(window(), with_events({kernel("side", 12, 99 * us, 150 * us, 9)}), 0, {});
  EXPECT_TRUE(on_time.escaped_kernels.empty()) << "within the edge slack of the start event";
}

TEST(window_audit, a_copy_still_in_flight_escaped) {
  auto records = with_events({});
  records.push_back({activity_kind::memcpy, "DtoD", 150 * us, 260 * us, 0, 9, 14, 1 << 20});
  const auto a = audit_window(window(), records, 0, {});
  ASSERT_EQ(a.escaped_copies.size(), 1u);
  EXPECT_EQ(a.copies, 1);
}

TEST(window_audit, work_not_launched_by_run_but_running_in_the_window_is_foreign) {
  const auto a = audit_window(window(), with_events({kernel("resident", 3, 50 * us, 400 * us, 9)}), 0, {});
  ASSERT_EQ(a.foreign.size(), 1u);
  EXPECT_EQ(a.kernels, 0);
}

TEST(window_audit, the_harness_own_work_before_and_after_the_window_is_ignored) {
  // The L2 flush ends as the start event fires; the clock probe runs after the stop event.
  const auto a = audit_window(window(), with_events({kernel("flush", 8, 20 * us, 100 * us), kernel("probe", 25, 300 * us, 310 * us)}), 0, {});
  EXPECT_TRUE(a.foreign.empty());
  EXPECT_TRUE(a.escaped_kernels.empty());
  EXPECT_EQ(a.kernels, 0);
}

TEST(window_audit, other_devices_child_launchers_and_access_policy_are_reported) {
  auto on_device_one = kernel("remote", 13, 110 * us, 150 * us, 7, 1);
  auto pinned = kernel("pinned", 14, 150 * us, 160 * us);
  pinned.access_policy_window = true;
  const auto a = audit_window(window(), with_events({on_device_one, pinned, kernel("parent", 15, 160 * us, 170 * us)}), 0, {"parent"});
  EXPECT_EQ(a.other_devices.size(), 1u);
  EXPECT_EQ(a.access_policy_kernels, std::vector<std::string>{"pinned"});
  EXPECT_EQ(a.device_launched, std::vector<std::string>{"parent"});
}

TEST(window_audit, a_device_idle_while_the_host_computes_has_a_low_busy_fraction) {
  auto records = with_events({});
  records.push_back({activity_kind::memcpy, "DtoH", 101 * us, 105 * us, 0, 7, 12, 64});
  records.push_back({activity_kind::memcpy, "HtoD", 195 * us, 199 * us, 0, 7, 13, 64});
  const auto a = audit_window(window(), records, 0, {});
  EXPECT_NEAR(a.busy_fraction, 0.08, 1e-9);
}

TEST(window_audit, empty_kernels_in_front_of_host_work_leave_long_idle_gaps) {
  // L1 evasion: five empty kernels, then 90 us of host work before the stop event.
  std::vector<timeline_activity> records;
  for (std::uint32_t k = 0; k < 5; ++k) records.push_back(kernel("empty", 11 + k, (101 + k) * us, (101 + k) * us + 500));
  const auto a = audit_window(window(), with_events(records), 0, {});
  EXPECT_EQ(a.kernels, 5);
  EXPECT_GT(a.long_gap_fraction, 0.9);
  EXPECT_EQ(a.kernel_launches.at("empty"), 5);
}

TEST(window_audit, idle_time_the_host_spent_inside_cuda_calls_is_not_a_long_gap) {
  // A slow driver call (a prefetch's page-table work): the device idles while the host is in it.
  timeline_activity prefetch{activity_kind::api, "api", 101 * us, 190 * us, 0, 0, 11};
  const auto a = audit_window(window(), with_events({prefetch, kernel("scale", 12, 190 * us, 199 * us)}), 0, {});
  EXPECT_NEAR(a.busy_fraction, 0.09, 1e-9);
  EXPECT_DOUBLE_EQ(a.long_gap_fraction, 0.0);
  EXPECT_TRUE(a.foreign.empty());
  EXPECT_EQ(a.kernels, 1);
}

TEST(window_audit, a_launch_bound_window_is_idle_in_short_gaps_only) {
  // C7: 3 us kernels every 10 us: busy 30%, no gap over a launch's latency.
  std::vector<timeline_activity> records;
  for (std::uint32_t k = 0; k < 10; ++k) records.push_back(kernel("tiny", 11 + k, (100 + 10 * k) * us, (103 + 10 * k) * us));
  const auto a = audit_window(window(), with_events(records), 0, {});
  EXPECT_NEAR(a.busy_fraction, 0.3, 1e-9);
  EXPECT_DOUBLE_EQ(a.long_gap_fraction, 0.0);
}

TEST(window_audit, cooperative_launches_and_managed_migrations_are_counted) {
  auto coop = kernel("grid_sync", 12, 101 * us, 150 * us);
  coop.launch_type = 1;
  auto records = with_events({coop, kernel("plain", 13, 150 * us, 190 * us)});
  timeline_activity migration{activity_kind::unified_memory, "migration HtoD", 120 * us, 130 * us, 0, 0, 0, 1 << 20};
  timeline_activity fault{activity_kind::unified_memory, "fault on the CPU", 140 * us, 140 * us, 0, 0, 0, 3};
  timeline_activity before{activity_kind::unified_memory, "migration DtoH", 10 * us, 20 * us, 0, 0, 0, 4096};
  records.insert(records.end(), {migration, fault, before});
  const auto a = audit_window(window(), records, 0, {});
  EXPECT_EQ(a.cooperative_launches, 1);
  EXPECT_EQ(a.unified_memory_bytes, 1u << 20);  // a fault's value is a count, not bytes; the earlier one is outside
  EXPECT_EQ(a.unified_memory, (std::vector<std::string>{"migration HtoD", "fault on the CPU"}));
  EXPECT_TRUE(a.foreign.empty());  // migrations carry no correlation: never "not launched by run()"
  const auto back = window_audit_from_json(to_json(a));
  EXPECT_EQ(back.unified_memory, a.unified_memory);
  EXPECT_EQ(back.kernel_launches, a.kernel_launches);
  EXPECT_EQ(back.cooperative_launches, 1);
}

TEST(window_audit, many_windows_each_get_their_own_records) {
  // Two samples: events 10/20 at 100/200 us and 30/40 at 300/400 us; a probe (25) between them.
  sample_window second;
  second.start_correlation = 30;
  second.stop_correlation = 40;
  auto records = with_events({kernel("a", 12, 110 * us, 190 * us), kernel("probe", 25, 250 * us, 260 * us),
                              kernel("b", 33, 310 * us, 390 * us), kernel("b", 35, 390 * us, 399 * us)});
  records.push_back(event_at(30, 300 * us));
  records.push_back(event_at(40, 400 * us));
  const auto audits = audit_windows({window(), second}, records, 0, {});
  ASSERT_EQ(audits.size(), 2u);
  EXPECT_EQ(audits[0].kernels, 1);
  EXPECT_EQ(audits[0].kernel_names, std::set<std::string>{"a"});
  EXPECT_EQ(audits[1].kernels, 2);
  EXPECT_EQ(audits[1].kernel_names, std::set<std::string>{"b"});
  EXPECT_TRUE(audits[0].foreign.empty());
  EXPECT_TRUE(audits[1].foreign.empty());
}

TEST(window_audit, missing_events_leave_the_window_incomplete) {
  const auto a = audit_window(window(), {kernel("k", 12, 1, 2)}, 0, {});
  EXPECT_FALSE(a.complete);
}

TEST(window_audit, survives_its_json_round_trip) {
  auto a = audit_window(window(), with_events({kernel("side", 12, 101 * us, 900 * us, 9)}), 0, {});
  a.api.allocations = 2;
  const auto back = window_audit_from_json(to_json(a));
  EXPECT_EQ(back.escaped_kernels, a.escaped_kernels);
  EXPECT_EQ(back.kernel_names, a.kernel_names);
  EXPECT_EQ(back.api.allocations, 2);
  EXPECT_DOUBLE_EQ(back.busy_fraction, a.busy_fraction);
}

TEST(timeline_json, round_trips_every_field) {
  auto k = kernel("k", 12, 5, 9, 3, 1);
  k.device_launched = true;
  k.launch_type = 1;
  const auto back = timeline_from_json(timeline_to_json({k}));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].name, "k");
  EXPECT_EQ(back[0].end_ns, 9u);
  EXPECT_TRUE(back[0].device_launched);
  EXPECT_EQ(back[0].launch_type, 1);
}

TEST(library_of_kernel, names_vendor_kernels_and_leaves_our_own) {
  EXPECT_EQ(library_of_kernel("nvjet_hsh_256x128_64x4_2x1_v_bz_coopA_NNN"), "cuBLAS");
  EXPECT_EQ(library_of_kernel("_Z15axpy_kernel_valIffEv19cublasAxpyParamsValIT_S1_T0_E"), "cuBLAS");
  EXPECT_EQ(library_of_kernel("cutlass_80_tensorop_s1688gemm"), "CUTLASS");
  EXPECT_EQ(library_of_kernel("_ZN4aisp5ch0712copy_kernelEPKfPfl"), "");
  // Issue 16: names as they appear in the CUDA 13.0 libraries.
  EXPECT_EQ(library_of_kernel("_Z40ncclDevKernel_AllReduce_Sum_bf16_TREE_LL24ncclDevKernelArgsStorageILm4096EE"), "NCCL");
  EXPECT_EQ(library_of_kernel("_Z23packR2C_callback_kernelIjfEv14RealComplex_stIT_E"), "cuFFT");
  EXPECT_EQ(library_of_kernel("void regular_fft<256u, EPT_8, 32u, 4u, CONSTANT>(unsigned int, float2*)"), "cuFFT");
  EXPECT_EQ(library_of_kernel("_ZN8cusparse15csrmm_v3_kernelIiffffEEvv"), "cuSPARSE");
  EXPECT_EQ(library_of_kernel("_Z13gen_sequencedI17curandStateXORWOWfiXadL_Z20curand_uniform_noargIS0_EfPT_iEE"), "cuRAND");
  EXPECT_EQ(library_of_kernel("_Z20generate_seed_pseudoI6rng_configI17curandStateXORWOWEEvyyyP13curandOrdering"), "cuRAND");
  EXPECT_EQ(library_of_kernel("_Z11getrf_pivotI13getrf_paramsIfEEvT_"), "cuSOLVER");
  EXPECT_EQ(library_of_kernel("_ZN8cutensor9reductionEv"), "cuTENSOR");
  EXPECT_EQ(library_of_kernel("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc"), "cuDNN");
  // A user's own kernel that draws with the cuRAND device API is not a library kernel.
  EXPECT_EQ(library_of_kernel("_Z11draw_kernelP17curandStateXORWOWPfi"), "");
}

TEST(cubin_scan, finds_the_kernel_that_launches_child_grids) {
  std::ifstream file(AISP_CHILD_LAUNCH_CUBIN, std::ios::binary);
  ASSERT_TRUE(file.good()) << AISP_CHILD_LAUNCH_CUBIN;
  const std::vector<char> image((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const auto launchers = kernels_launching_children(image.data(), image.size());
  EXPECT_EQ(launchers, std::set<std::string>{"_Z17launches_childrenPf"});
}

TEST(cubin_scan, rejects_what_is_not_an_elf_image) {
  const std::string junk(256, 'x');
  EXPECT_TRUE(kernels_launching_children(junk.data(), junk.size()).empty());
  EXPECT_TRUE(kernels_launching_children(nullptr, 0).empty());
  EXPECT_TRUE(kernels_launching_children(junk.data(), 10).empty());
}

// The judge's checks: each finding reported once per variant with its codes.
class timeline_checks_test : public ::testing::Test {
 protected:
  timeline_checks_test() : declared_("t:x") {
    runs_.name = "optimized";
    slot_.label = "optimized";
    slot_.runs = &runs_;
  }
  std::vector<std::string> codes() {
    std::vector<check_result> checks;
    check_device_timeline(declared_, work_, slot_, checks);
    std::vector<std::string> all;
    for (const auto& c : checks) all.insert(all.end(), c.codes.begin(), c.codes.end());
    return all;
  }
  void add(window_audit a) {
    a.complete = true;
    a.window_s = 100e-6;
    if (a.busy_fraction == 0) a.busy_fraction = 0.9;
    slot_.audits.push_back(std::move(a));
  }
  static bool has(const std::vector<std::string>& codes, const std::string& code) {
    return std::find(codes.begin(), codes.end(), code) != codes.end();
  }
  pair declared_;
  workload work_;
  variant runs_;
  variant_slot slot_;
};

TEST_F(timeline_checks_test, clean_samples_raise_nothing) {
  window_audit a;
  a.kernels = 1;
  a.kernel_names = {"mine"};
  add(a);
  add(a);
  EXPECT_TRUE(codes().empty());
}

TEST_F(timeline_checks_test, escapes_long_overruns_and_api_calls_carry_their_codes) {
  window_audit a;
  a.kernels = 1;
  a.escaped_kernels = {"spin"};
  a.overrun_s = 5e-3;
  a.escaped_copies = {"memcpy DtoD"};
  a.api.allocations = 1;
  a.api.host_callbacks = 1;
  a.api.module_loads = 1;
  a.api.math_mode_changes = 1;
  a.api.access_policy = 1;
  a.device_launched = {"parent"};
  a.other_devices = {"k on device 1"};
  add(a);
  const auto c = codes();
  for (const char* code : {"T1", "C4", "T2", "M3", "M4", "C1", "K5", "L7", "W2", "X4", "C9", "C5"}) EXPECT_TRUE(has(c, code)) << code;
}

TEST_F(timeline_checks_test, a_declared_library_or_access_policy_is_not_a_cheat) {
  window_audit a;
  a.kernels = 1;
  a.kernel_names = {"nvjet_hsh_256x128"};
  a.api.access_policy = 1;
  add(a);
  EXPECT_TRUE(has(codes(), "X6"));
  EXPECT_TRUE(has(codes(), "X4"));
  runs_.library = "cuBLAS";
  declared_.allow_access_policy_window();
  EXPECT_FALSE(has(codes(), "X6"));
  EXPECT_FALSE(has(codes(), "X4"));
}

// K6: a rank that keeps its own kernel is not a change when another rank is the slowest; a
// rank that switches kernels between samples is.
TEST_F(timeline_checks_test, kernel_choice_is_compared_rank_by_rank) {
  window_audit a;
  a.kernels = 1;
  a.kernel_names = {"mine_a"};
  a.kernel_launches = {{"mine_a", 1}};
  a.rank_kernel_launches = {{{"mine_a", 1}}, {{"mine_b", 1}}};
  window_audit b = a;
  b.kernel_names = {"mine_b"};
  b.kernel_launches = {{"mine_b", 1}};  // rank 1 was the slowest this time
  add(a);
  add(b);
  EXPECT_FALSE(has(codes(), "K6"));
  window_audit switched = a;
  switched.rank_kernel_launches = {{{"mine_a", 1}}, {{"mine_c", 1}}};
  add(switched);
  EXPECT_TRUE(has(codes(), "K6"));
}

// Note [data-dependent launches]: the counts may vary with the inputs, the kernels may not.
TEST_F(timeline_checks_test, data_dependent_launches_may_vary_their_counts_but_not_their_kernels) {
  window_audit few;
  few.kernels = 12;
  few.kernel_names = {"draft", "verify"};
  few.kernel_launches = {{"draft", 8}, {"verify", 4}};
  window_audit many = few;
  many.kernels = 30;
  many.kernel_launches = {{"draft", 24}, {"verify", 6}};
  add(few);
  add(many);
  EXPECT_TRUE(has(codes(), "K6")) << "declared nothing: the counts must hold";
  declared_.data_dependent_launches("rounds depend on the accepted drafts");
  EXPECT_FALSE(has(codes(), "K6"));
  window_audit retuned = few;
  retuned.kernel_names = {"draft", "verify_other_tile"};
  retuned.kernel_launches = {{"draft", 8}, {"verify_other_tile", 4}};
  add(retuned);
  EXPECT_TRUE(has(codes(), "K6")) << "another kernel is still a change";
}

// D5: the bucket layout measured is the one the workload names.
TEST_F(timeline_checks_test, a_multi_gpu_variant_must_run_the_collectives_its_workload_declares) {
  declared_.world_size(2);
  work_.params["buckets"] = 16;
  runs_.library = "NCCL";
  runs_.collectives = [](const workload& w) { return w.get("buckets"); };
  slot_.result.calls_per_sample = 2;
  const std::string all_reduce = "_Z40ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE";
  window_audit honest;
  honest.kernels = 64;
  honest.kernel_names = {all_reduce, "gradient"};
  honest.kernel_launches = {{all_reduce, 32}, {"gradient", 32}};
  add(honest);
  EXPECT_FALSE(has(codes(), "D5"));
  window_audit merged = honest;  // 4 all-reduces of 4 buckets each, a call
  merged.kernel_launches[all_reduce] = 8;
  add(merged);
  EXPECT_TRUE(has(codes(), "D5"));
  runs_.collectives = nullptr;  // nothing declared: nothing checked
  EXPECT_FALSE(has(codes(), "D5"));
  runs_.collectives = [](const workload& w) { return w.get("buckets"); };
  declared_.world_size(1);  // a single-GPU pair has no collectives to count
  EXPECT_FALSE(has(codes(), "D5"));
}

TEST_F(timeline_checks_test, idle_devices_need_most_samples_and_few_operations) {
  window_audit idle;
  idle.copies = 2;
  idle.busy_fraction = 0.05;
  add(idle);
  window_audit busy;
  busy.kernels = 2;
  add(busy);
  EXPECT_FALSE(has(codes(), "L1"));  // one of two samples is not "most"
  add(idle);
  EXPECT_TRUE(has(codes(), "L1"));
}

TEST_F(timeline_checks_test, idle_in_long_gaps_is_l1_however_many_operations_ran) {
  window_audit padded;
  padded.kernels = 6;
  padded.busy_fraction = 0.02;
  padded.long_gap_fraction = 0.95;
  add(padded);
  add(padded);
  EXPECT_TRUE(has(codes(), "L1"));
}

TEST_F(timeline_checks_test, launch_bound_samples_are_recorded_not_failed) {
  window_audit tiny;
  tiny.kernels = 40;
  tiny.busy_fraction = 0.3;
  tiny.cooperative_launches = 4;
  add(tiny);
  add(tiny);
  EXPECT_TRUE(codes().empty());
  const auto summary = summarize_device_audit(slot_);
  EXPECT_TRUE(summary.at("launch_bound").get<bool>());
  EXPECT_EQ(summary.at("launch_bound_samples").get<int>(), 2);
  EXPECT_EQ(summary.at("launches").at("cooperative").get<int>(), 8);
  EXPECT_EQ(summary.at("launches").at("regular").get<int>(), 72);
}

TEST_F(timeline_checks_test, kernels_that_change_between_samples_are_k6) {
  slot_.result.calls_per_sample = 4;
  window_audit first;
  first.kernels = 4;
  first.kernel_launches = {{"tile_64", 4}};
  window_audit retuned = first;
  retuned.kernel_launches = {{"tile_128", 4}};
  add(first);
  add(first);
  EXPECT_FALSE(has(codes(), "K6"));
  add(retuned);
  EXPECT_TRUE(has(codes(), "K6"));
}

TEST_F(timeline_checks_test, the_same_kernels_in_another_order_of_calls_are_not_k6) {
  slot_.result.calls_per_sample = 2;
  window_audit a;
  a.kernels = 4;
  a.kernel_launches = {{"gemm", 2}, {"epilogue", 2}};
  add(a);
  add(a);
  EXPECT_FALSE(has(codes(), "K6"));
}

TEST_F(timeline_checks_test, managed_memory_is_c10_unless_the_pair_declares_it) {
  window_audit setup_only;
  setup_only.kernels = 1;
  setup_only.managed_allocations = 1;
  add(setup_only);
  window_audit migrating = setup_only;
  migrating.unified_memory = {"migration HtoD"};
  migrating.unified_memory_bytes = 1 << 20;
  add(migrating);
  EXPECT_TRUE(has(codes(), "C10"));
  declared_.allow_managed_memory();
  EXPECT_FALSE(has(codes(), "C10"));
}

TEST_F(timeline_checks_test, a_varying_operation_count_per_call_is_flagged) {
  window_audit one;
  one.kernels = 1;
  window_audit two;
  two.kernels = 2;
  add(one);
  add(two);
  EXPECT_TRUE(has(codes(), "W3"));
}

}  // namespace
}  // namespace aisp
