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
#include <utility>
#include <vector>

#include "aisp/check.hpp"
#include "harness/buffer_digest.hpp"
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

// Note [derived inputs]: the device rounds a bf16 source into e4m3 and e5m2, and scaled by 127
// into i8, exactly as the host does.
TEST(device_call_fill, a_derived_input_is_the_hosts_rounding_of_its_source) {
  AISP_REQUIRE_GPU();
  constexpr std::size_t n = 1 << 16;
  device_buffer<std::uint16_t> source(n);
  device_buffer<std::uint8_t> derived(n);
  aisp::device_fill_input(dtype::bf16, aisp::init_distribution::uniform_signed, 31, source.get(), n, nullptr);
  const auto bf16 = source.read();
  for (const auto& [to, scale] : {std::pair{dtype::e4m3, 1.0}, std::pair{dtype::e5m2, 1.0}, std::pair{dtype::i8, 127.0}}) {
    aisp::device_derive_input(dtype::bf16, source.get(), to, derived.get(), n, scale, nullptr);
    std::vector<std::uint8_t> expected(n);
    aisp::host_derive_input(dtype::bf16, bf16.data(), to, expected.data(), n, scale);
    EXPECT_EQ(derived.read(), expected) << aisp::dtype_name(to);
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

namespace {

// Note [buffer digests]: a changed byte anywhere (the last partial word too) changes the digest,
// an unchanged buffer keeps it, and the device's subnormal count is the host's.
TEST(buffer_digest, moves_with_any_byte_and_counts_subnormals_as_the_host_does) {
  AISP_REQUIRE_GPU();
  const std::size_t bytes = (std::size_t{1} << 22) + 5;  // a tail that is no whole word
  std::vector<unsigned char> host(bytes);
  aisp::fill_random_bytes(99, host.data(), bytes);
  device_buffer<unsigned char> buffer(bytes);
  AISP_CUDA_CHECK(cudaMemcpy(buffer.get(), host.data(), bytes, cudaMemcpyHostToDevice));
  const auto first = aisp::device_digest(buffer.get(), bytes, nullptr);
  EXPECT_EQ(aisp::device_digest(buffer.get(), bytes, nullptr), first);
  for (const std::size_t at : {std::size_t{0}, std::size_t{4096}, bytes - 1}) {
    const unsigned char flipped = static_cast<unsigned char>(host[at] ^ 0x10);
    AISP_CUDA_CHECK(cudaMemcpy(buffer.get() + at, &flipped, 1, cudaMemcpyHostToDevice));
    EXPECT_NE(aisp::device_digest(buffer.get(), bytes, nullptr), first) << "byte " << at;
    AISP_CUDA_CHECK(cudaMemcpy(buffer.get() + at, &host[at], 1, cudaMemcpyHostToDevice));
  }
  // Two words swapped: same content, other order.
  AISP_CUDA_CHECK(cudaMemcpy(buffer.get(), host.data() + 8, 8, cudaMemcpyHostToDevice));
  AISP_CUDA_CHECK(cudaMemcpy(buffer.get() + 8, host.data(), 8, cudaMemcpyHostToDevice));
  EXPECT_NE(aisp::device_digest(buffer.get(), bytes, nullptr), first);
  for (const dtype type : {dtype::f64, dtype::f32, dtype::f16, dtype::bf16, dtype::e4m3, dtype::e5m2, dtype::i32}) {
    const std::size_t count = bytes / aisp::dtype_size(type);
    EXPECT_EQ(aisp::device_count_subnormals(type, buffer.get(), count, nullptr), aisp::host_count_subnormals(type, host.data(), count))
        << aisp::dtype_name(type);
  }
  EXPECT_GT(aisp::host_count_subnormals(dtype::e4m3, host.data(), bytes), 0u);  // random bytes hold some
}

}  // namespace
