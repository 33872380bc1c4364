// E4 without a GPU: what a pair's workers need against what is free, before any allocation.
#include <gtest/gtest.h>

#include "runner/memory_fit.hpp"
#include "support/warm_heap.hpp"

namespace aisp {
namespace {

constexpr std::uint64_t gib = 1ull << 30;

// x and y of n floats each: 8n bytes of buffers, 4n of outputs.
pair affine(backend where) {
  const auto count = [](const workload& w) { return w.get("n"); };
  return pair("t:affine")
      .on(where)
      .benchmark_size({{"n", std::int64_t{1} << 28}})
      .input("x", dtype::f32, count)
      .output("y", dtype::f32, count);
}

TEST(memory_fit, a_worker_holds_two_sets_of_buffers) {
  const auto p = affine(backend::cuda);
  const auto need = device_memory_need(p, p.benchmark_workload(), 3, 80 * gib);
  EXPECT_EQ(need.per_worker, 2 * 2 * gib);  // 1 GiB each for x and y at 2^28 floats
  EXPECT_EQ(need.needed, 3 * need.per_worker);
  EXPECT_EQ(memory_fit_problem(need), "");
  EXPECT_NE(describe(need).find("12.00 GiB needed"), std::string::npos);
}

TEST(memory_fit, a_workload_larger_than_what_is_free_is_refused_in_one_line) {
  const auto p = affine(backend::cuda);
  workload big = p.benchmark_workload();
  big.params["n"] = std::int64_t{1} << 32;  // 16 GiB per buffer
  const auto problem = memory_fit_problem(device_memory_need(p, big, 3, 80 * gib));
  EXPECT_NE(problem.find("does not fit in device memory"), std::string::npos) << problem;
  EXPECT_NE(problem.find("--size"), std::string::npos);
  EXPECT_EQ(problem.find('\n'), std::string::npos);
}

TEST(memory_fit, the_headroom_counts_so_an_exact_fit_is_refused) {
  const auto p = affine(backend::cuda);
  const auto need = device_memory_need(p, p.benchmark_workload(), 3, std::nullopt);
  EXPECT_EQ(memory_fit_problem(need), "");  // unknown free memory: nothing to refuse
  auto exact = need;
  exact.available = need.needed;
  EXPECT_NE(memory_fit_problem(exact), "");
}

TEST(memory_fit, host_pairs_need_their_buffers_in_host_memory_and_cuda_pairs_only_the_readback) {
  const auto host = affine(backend::host);
  const auto cuda = affine(backend::cuda);
  const auto on_host = host_memory_need(host, host.benchmark_workload(), 3, 4 * gib);
  EXPECT_EQ(on_host.needed, 3 * (4 * gib + warm_heap_default_bytes) + 2 * gib);  // Note [warm heap]
  EXPECT_NE(memory_fit_problem(on_host), "");
  const auto readback = host_memory_need(cuda, cuda.benchmark_workload(), 3, 64 * gib);
  EXPECT_EQ(readback.needed, 3 * gib + 2 * gib);
  EXPECT_EQ(memory_fit_problem(readback), "");
}

TEST(memory_fit, this_machine_reports_its_available_memory) {
  const auto available = host_available_memory();
  ASSERT_TRUE(available.has_value());
  EXPECT_GT(*available, 0u);
}

}  // namespace
}  // namespace aisp
