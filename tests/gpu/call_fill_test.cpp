// The device side of Note [fresh calls] against the host's: inputs regenerated on the GPU keep
// their distribution (and a permutation stays one), every output fill is found again exactly
// where nothing was written, and the device pattern is byte for byte the host's.
#include <gtest/gtest.h>

#include "gpu_guard.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "aisp/check.hpp"
#include "harness/call_fill.hpp"
#include "support/element_codec.hpp"
#include "support/seeded_fill.hpp"

namespace {

using aisp::dtype;

template <class T>
class device_buffer {
 public:
  explicit device_buffer(std::size_t count) : count_(count) { AISP_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T))); }
  ~device_buffer() { cudaFree(data_); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  [[nodiscard]] T* get() const { return data_; }
  [[nodiscard]] std::vector<T> read() const {
    std::vector<T> host(count_);
    AISP_CUDA_CHECK(cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  T* data_ = nullptr;
  std::size_t count_;
};

TEST(device_call_fill, inputs_keep_their_distribution_and_change_with_the_seed) {
  AISP_REQUIRE_GPU();
  constexpr std::size_t n = 1 << 20;
  device_buffer<float> x(n);
  aisp::device_fill_input(dtype::f32, aisp::init_distribution::uniform_signed, 11, x.get(), n, nullptr);
  const auto first = x.read();
  EXPECT_TRUE(std::all_of(first.begin(), first.end(), [](float v) { return v >= -1.0f && v < 1.0f; }));
  const double mean = std::accumulate(first.begin(), first.end(), 0.0) / n;
  EXPECT_LT(std::abs(mean), 0.01);
  aisp::device_fill_input(dtype::f32, aisp::init_distribution::uniform_signed, 12, x.get(), n, nullptr);
  const auto second = x.read();
  std::size_t same = 0;
  for (std::size_t i = 0; i < n; ++i) same += first[i] == second[i];
  EXPECT_LT(same, n / 1000);
  aisp::device_fill_input(dtype::f32, aisp::init_distribution::small_integers, 13, x.get(), n, nullptr);
  for (float v : x.read()) ASSERT_TRUE(v == std::floor(v) && v >= -8 && v <= 8) << v;
}

TEST(device_call_fill, a_regenerated_index_permutation_is_a_permutation) {
  AISP_REQUIRE_GPU();
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{1} << 18}) {
    device_buffer<std::int32_t> index(n);
    aisp::device_fill_input(dtype::i32, aisp::init_distribution::index_permutation, 21, index.get(), n, nullptr);
    auto values = index.read();
    std::sort(values.begin(), values.end());
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(values[i], static_cast<std::int32_t>(i)) << "n = " << n;
  }
}

TEST(device_call_fill, fills_are_the_hosts_and_are_found_where_nothing_was_written) {
  AISP_REQUIRE_GPU();
  constexpr std::size_t n = 100003;
  for (const bool poison : {false, true}) {
    for (dtype type : {dtype::f32, dtype::bf16, dtype::e4m3, dtype::f64}) {
      const std::size_t width = aisp::dtype_size(type);
      device_buffer<unsigned char> y(n * width);
      const aisp::output_fill fill{99, poison};
      aisp::device_fill_output(type, fill, y.get(), n, nullptr);
      std::vector<unsigned char> host(n * width);
      aisp::host_fill_output(type, fill, host.data(), n);
      ASSERT_EQ(y.read(), host) << aisp::dtype_name(type);
      EXPECT_EQ(aisp::device_count_fill(type, fill, y.get(), n, 16, nullptr).count, n);
      AISP_CUDA_CHECK(cudaMemset(y.get() + 5 * width, 0x11, 3 * width));  // elements 5..7 "written"
      const auto matches = aisp::device_count_fill(type, fill, y.get(), n, 1 << 20, nullptr);
      EXPECT_EQ(matches.count, n - 3);
      EXPECT_EQ(matches.first.size(), n - 3);
      EXPECT_TRUE(std::is_sorted(matches.first.begin(), matches.first.end()));
      const auto gathered = aisp::device_gather(y.get(), width, {0, 5, n - 1}, nullptr);
      EXPECT_TRUE(std::equal(gathered.begin(), gathered.begin() + static_cast<std::ptrdiff_t>(width), host.begin()));
      EXPECT_EQ(gathered[width], 0x11);
    }
  }
}

}  // namespace
