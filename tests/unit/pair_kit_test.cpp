// The shared pieces of include/aisp/pair_kit.hpp, against values worked out by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"

namespace {

// A reference_io over host vectors, as the harness hands the reference its fp64 buffers.
class vector_io : public aisp::reference_io {
 public:
  explicit vector_io(aisp::workload work) : work_(std::move(work)) {}
  [[nodiscard]] const aisp::workload& work() const override { return work_; }
  [[nodiscard]] std::span<const double> input(std::string_view name) const override {
    return buffers_.at(std::string(name));
  }
  [[nodiscard]] std::span<double> output(std::string_view name) override {
    return buffers_.at(std::string(name));
  }
  std::vector<double>& buffer(const std::string& name) { return buffers_[name]; }

 private:
  aisp::workload work_;
  std::map<std::string, std::vector<double>> buffers_;
};

// A context for stages that never look at it.
class idle_context : public aisp::run_context {
 public:
  [[nodiscard]] const aisp::workload& work() const override { return work_; }
  [[nodiscard]] cudaStream_t stream() const override { return nullptr; }
  [[nodiscard]] void* buffer(std::string_view) const override { return nullptr; }
  [[nodiscard]] std::int64_t num_elements(std::string_view) const override { return 0; }
  [[nodiscard]] aisp::dtype buffer_type(std::string_view) const override {
    return aisp::dtype::f32;
  }
  [[nodiscard]] void*& user_state() override { return state_; }
  void note(std::string_view, std::string_view) override {}
  void record(std::string_view, double) override {}
  void deliver(std::span<const int>) override {}

 private:
  aisp::workload work_;
  void* state_ = nullptr;
};

// An "input" of f32 and an "output" of the given size and dtype, for the memcpy peer's checks.
class copy_context : public idle_context {
 public:
  copy_context(std::int64_t input_elements, std::int64_t output_elements, aisp::dtype output_type)
      : input_elements_(input_elements),
        output_elements_(output_elements),
        output_type_(output_type) {}
  [[nodiscard]] std::int64_t num_elements(std::string_view name) const override {
    return name == "input" ? input_elements_ : output_elements_;
  }
  [[nodiscard]] aisp::dtype buffer_type(std::string_view name) const override {
    return name == "input" ? aisp::dtype::f32 : output_type_;
  }

 private:
  std::int64_t input_elements_;
  std::int64_t output_elements_;
  aisp::dtype output_type_;
};

aisp::workload mnk(std::int64_t m, std::int64_t n, std::int64_t k) {
  aisp::workload w;
  w.params = {{"m", m}, {"n", n}, {"k", k}};
  return w;
}

TEST(matmul_reference, multiplies_a_2x3_by_a_3x2_as_by_hand_and_overwrites_every_output) {
  vector_io io(mnk(2, 2, 3));
  io.buffer("a") = {1, 2, 3,   // (2, 3) row-major
                    4, 5, 6};
  io.buffer("b") = {7, 8,      // (3, 2) row-major
                    9, 10,
                    11, 12};
  // Poisoned, as the harness leaves outputs: every element must be overwritten.
  io.buffer("c").assign(4, std::numeric_limits<double>::quiet_NaN());
  aisp::kit::matmul_reference(io);
  // 1*7 + 2*9 + 3*11 = 58, 1*8 + 2*10 + 3*12 = 64, 4*7 + 5*9 + 6*11 = 139, 4*8 + 5*10 + 6*12 = 154.
  EXPECT_EQ(io.buffer("c"), (std::vector<double>{58, 64, 139, 154}));
}

TEST(matmul_reference, reads_b_as_k_by_n_not_transposed) {
  // m = 1, n = 3, k = 2: c = [1, 1] @ b sums b's two rows; a transposed read would sum columns.
  vector_io io(mnk(1, 3, 2));
  io.buffer("a") = {1, 1};
  io.buffer("b") = {1, 2, 3,
                    10, 20, 30};
  io.buffer("c").assign(3, std::numeric_limits<double>::quiet_NaN());
  aisp::kit::matmul_reference(io);
  EXPECT_EQ(io.buffer("c"), (std::vector<double>{11, 22, 33}));
}

TEST(matmul_work, counts_each_matrix_once_at_the_element_size_and_two_flops_per_term) {
  const aisp::work_fn work = aisp::kit::matmul_work(4);
  const aisp::work_amount amount = work(mnk(2, 3, 5));
  // A 2 x 5, B 5 x 3, C 2 x 3: 10 + 15 + 6 = 31 elements of 4 bytes; 2 * 2 * 3 * 5 FLOPs.
  EXPECT_EQ(amount.bytes, 124.0);
  EXPECT_EQ(amount.flops, 60.0);
  EXPECT_EQ(aisp::kit::matmul_work(2)(mnk(2, 3, 5)).bytes, 62.0);
}

TEST(with_state, keeps_run_setup_and_teardown_apart_and_leaves_the_rest_default) {
  std::string called;
  const aisp::variant v = aisp::kit::with_state(
      "optimized", "what changed", [&](aisp::run_context&) { called += "run,"; },
      [&](aisp::run_context&) { called += "setup,"; },
      [&](aisp::run_context&) { called += "teardown,"; });
  EXPECT_EQ(v.name, "optimized");
  EXPECT_EQ(v.summary, "what changed");
  idle_context context;
  v.setup(context);
  v.run(context);
  v.teardown(context);
  EXPECT_EQ(called, "setup,run,teardown,");
  EXPECT_TRUE(v.library.empty());
  EXPECT_TRUE(v.precision.empty());
  EXPECT_FALSE(v.precision_tolerance.has_value());
  EXPECT_EQ(v.math, aisp::math_unit::fp32_simt);
}

TEST(memcpy_peer, is_a_library_peer_that_a_copy_pair_accepts_beside_its_own_variants) {
  const auto count = [](const aisp::workload& w) { return w.get("n"); };
  const auto copy = [](aisp::run_context&) {};
  auto declared = aisp::pair("ch07:copy")
                      .benchmark_size({{"n", 64}})
                      .validation_size({{"n", 7}})
                      .held_out_size({{"n", 9}})
                      .input("input", aisp::dtype::f32, count)
                      .output("output", aisp::dtype::f32, count)
                      .work([](const aisp::workload&) { return aisp::work_amount{8, 0}; })
                      .reference([](aisp::reference_io&) {})
                      .add_variant("baseline", "scalar", copy)
                      .add_variant("optimized", "float4", copy)
                      .add_variant(aisp::kit::memcpy_peer("input", "output"));
  EXPECT_NO_THROW(declared.validate());
  const aisp::variant& peer = declared.find_variant("peer_memcpy");
  EXPECT_EQ(peer.library, "CUDA runtime");
  EXPECT_FALSE(peer.setup);  // nothing to prepare: one driver call per run()
  EXPECT_TRUE(peer.precision.empty());
}

TEST(memcpy_peer, refuses_an_output_of_another_size_or_dtype_before_it_copies) {
  const aisp::variant peer = aisp::kit::memcpy_peer("input", "output");
  copy_context shorter(7, 6, aisp::dtype::f32);
  EXPECT_THROW(peer.run(shorter), aisp::contract_error);
  copy_context narrower(7, 7, aisp::dtype::f16);  // 14 bytes where 28 are read
  EXPECT_THROW(peer.run(narrower), aisp::contract_error);
}

}  // namespace
