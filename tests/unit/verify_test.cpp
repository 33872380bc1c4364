#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>
#include <vector>

#include "aisp/check.hpp"
#include "harness/buffer_digest.hpp"
#include "support/element_codec.hpp"
#include "support/seeded_fill.hpp"
#include "verify/compare.hpp"
#include "verify/golden_store.hpp"
#include "verify/tolerance.hpp"

namespace {

using aisp::dtype;

std::vector<unsigned char> as_f32_bytes(const std::vector<float>& values) {
  std::vector<unsigned char> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

TEST(compare_output, passes_values_within_the_fp32_tolerance_and_reports_headroom) {
  const auto actual = as_f32_bytes({1.0f, -2.0f, 0.5f});
  const std::vector<double> expected = {1.0, -2.0, 0.5000001};
  const auto result = aisp::verify::compare_output("y", dtype::f32, actual, expected, aisp::verify::default_tolerance(dtype::f32));
  EXPECT_TRUE(result.passed()) << result.describe();
  EXPECT_EQ(result.elements, 3u);
  // |0.5 - 0.5000001| = 1e-7 against 1e-8 + 1e-5 * the output's RMS (0.5000001 is under it, Note
  // [cancellation floor]): under 1% of tolerance.
  const double rms = std::sqrt((1.0 + 4.0 + 0.5000001 * 0.5000001) / 3);
  EXPECT_NEAR(result.worst_tolerance_fraction, 1e-7 / (1e-8 + 1e-5 * rms), 1e-3);
}

// Note [cancellation floor]: a sum that cancels to near zero carries its terms' rounding error;
// beside the output's RMS that error is a rounding's size, and it passes. An error of a thousandth
// of the RMS (a lower-precision reduction's) still fails there, and a large element keeps its own
// relative bound.
TEST(compare_output, a_near_zero_sum_is_held_to_the_outputs_scale_not_its_own) {
  std::vector<double> expected(256);
  std::vector<float> actual(256);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    expected[i] = (i % 2 == 0 ? 6.0 : -6.0) + 0.001 * static_cast<double>(i);
    actual[i] = static_cast<float>(expected[i]);
  }
  expected[43] = -0.0195306233;  // the honest oneDNN convolution's element (a user's case, 2026-12-05)
  actual[43] = -0.0195303559f;
  const auto tol = aisp::verify::default_tolerance(dtype::f32);
  const auto honest = aisp::verify::compare_output("y", dtype::f32, as_f32_bytes(actual), expected, tol);
  EXPECT_TRUE(honest.passed()) << honest.describe();
  actual[43] = static_cast<float>(expected[43] + 6e-3);  // a thousandth of the RMS
  EXPECT_FALSE(aisp::verify::compare_output("y", dtype::f32, as_f32_bytes(actual), expected, tol).passed());
  actual[43] = -0.0195303559f;
  actual[10] = static_cast<float>(expected[10] * (1 + 1e-4));  // a large element 10x past its own bound
  EXPECT_FALSE(aisp::verify::compare_output("y", dtype::f32, as_f32_bytes(actual), expected, tol).passed());
}

// Note [L2 under the type's spacing]: one e4m3 element in the subnormal range, correctly rounded,
// passes although its relative error is past the L2 bound; one step off does not, and neither
// does the same relative error on a normal value.
TEST(compare_output, a_correctly_rounded_fp8_subnormal_passes_the_l2_bound) {
  const auto tol = aisp::verify::default_tolerance(dtype::e4m3);
  const auto e4m3 = [](double value) {
    std::vector<unsigned char> byte(1);
    aisp::store_from_double(dtype::e4m3, byte.data(), 0, value);
    return byte;
  };
  const std::vector<double> expected = {0.0064};  // rounds to 3 x 2^-9 = 0.00586: 8.4% off
  const auto honest = aisp::verify::compare_output("y", dtype::e4m3, e4m3(0.0064), expected, tol);
  EXPECT_NEAR(honest.rel_l2_error, 0.084, 0.002);
  EXPECT_TRUE(honest.passed()) << honest.describe();
  const auto a_step_off = aisp::verify::compare_output("y", dtype::e4m3, e4m3(0.0064 - 0x1p-9), expected, tol);
  EXPECT_FALSE(a_step_off.passed()) << a_step_off.describe();
  const std::vector<double> normal = {1.0};
  const auto off_by_a_tenth = aisp::verify::compare_output("y", dtype::e4m3, e4m3(1.125), normal, tol);
  EXPECT_FALSE(off_by_a_tenth.passed()) << off_by_a_tenth.describe();
}

TEST(compare_output, flags_an_element_still_holding_the_poison_as_unwritten_O10) {
  std::vector<unsigned char> actual = as_f32_bytes({1.0f, 2.0f, 3.0f});
  aisp::fill_poison(dtype::f32, actual.data() + 2 * sizeof(float), 1);
  const auto result = aisp::verify::compare_output("y", dtype::f32, actual, std::vector<double>{1.0, 2.0, 3.0}, aisp::verify::default_tolerance(dtype::f32));
  EXPECT_FALSE(result.passed());
  EXPECT_EQ(result.reason_code, "O10");
  EXPECT_EQ(result.unwritten, 1u);
  ASSERT_FALSE(result.first_mismatches.empty());
  EXPECT_EQ(result.first_mismatches.front().index, 2u);
}

TEST(compare_output, never_passes_a_nan_O4) {
  const auto actual = as_f32_bytes({1.0f, std::nanf("")});
  const auto result = aisp::verify::compare_output("y", dtype::f32, actual, std::vector<double>{1.0, 2.0}, aisp::verify::default_tolerance(dtype::f32));
  EXPECT_EQ(result.reason_code, "O4");
  EXPECT_EQ(result.nan_count, 1u);
}

TEST(compare_output, fails_an_inf_the_reference_does_not_have_O5) {
  const auto actual = as_f32_bytes({INFINITY, 1.0f});
  const auto result = aisp::verify::compare_output("y", dtype::f32, actual, std::vector<double>{1.0, 1.0}, aisp::verify::default_tolerance(dtype::f32));
  EXPECT_EQ(result.reason_code, "O5");
}

TEST(compare_output, fails_an_error_beyond_tolerance_O3_and_names_the_first_element) {
  const auto actual = as_f32_bytes({1.0f, 2.001f});
  const auto result = aisp::verify::compare_output("y", dtype::f32, actual, std::vector<double>{1.0, 2.0}, aisp::verify::default_tolerance(dtype::f32));
  EXPECT_EQ(result.reason_code, "O3");
  EXPECT_EQ(result.failing, 1u);
  EXPECT_EQ(result.first_mismatches.front().index, 1u);
  EXPECT_NE(result.describe().find("first at [1]"), std::string::npos);
}

TEST(compare_output, integers_must_match_exactly) {
  std::vector<unsigned char> actual(2 * sizeof(std::int32_t));
  aisp::store_from_double(dtype::i32, actual.data(), 0, 5);
  aisp::store_from_double(dtype::i32, actual.data(), 1, 6);
  const auto result = aisp::verify::compare_output("idx", dtype::i32, actual, std::vector<double>{5.0, 7.0}, aisp::verify::default_tolerance(dtype::i32));
  EXPECT_EQ(result.reason_code, "O3");
}

TEST(compare_output, a_size_mismatch_is_a_contract_error) {
  const auto actual = as_f32_bytes({1.0f});
  EXPECT_THROW((void)aisp::verify::compare_output("y", dtype::f32, actual, std::vector<double>{1.0, 2.0}, aisp::verify::default_tolerance(dtype::f32)),
               aisp::contract_error);
}

TEST(element_codec, half_and_bf16_round_trip_known_values) {
  // 1.0 = 0x3C00 (half), 0x3F80 (bf16); -2.5 = 0xC100 (half), 0xC020 (bf16).
  EXPECT_EQ(aisp::float_to_half_bits(1.0f), 0x3C00);
  EXPECT_EQ(aisp::float_to_half_bits(-2.5f), 0xC100);
  EXPECT_EQ(aisp::float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(aisp::float_to_bf16_bits(-2.5f), 0xC020);
  EXPECT_EQ(aisp::half_bits_to_float(0x3555), 0.333251953125f);  // nearest half to 1/3
  EXPECT_EQ(aisp::float_to_half_bits(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(aisp::float_to_half_bits(65520.0f), 0x7C00) << "rounds past the largest half to Inf";
  EXPECT_EQ(aisp::half_bits_to_float(0x0001), std::ldexp(1.0f, -24)) << "smallest subnormal";
}

TEST(element_codec, bf16_rounds_to_nearest_even) {
  const auto bf16 = [](float value) { return aisp::bf16_bits_to_float(aisp::float_to_bf16_bits(value)); };
  EXPECT_EQ(bf16(1.0f + 0x1.0p-8f), 1.0f);                          // a tie: to the even 1.0
  EXPECT_EQ(bf16(1.0f + 0x1.0p-7f + 0x1.0p-8f), 1.0f + 0x1.0p-6f);  // a tie: up to the even
  EXPECT_EQ(bf16(1.0f + 0x1.8p-8f), 1.0f + 0x1.0p-7f);              // above a tie: up
  EXPECT_EQ(bf16(-3.0f - 0x1.0p-12f), -3.0f);
}

TEST(element_codec, poison_is_recognised_for_every_dtype_and_random_values_are_not) {
  for (dtype type : {dtype::f64, dtype::f32, dtype::f16, dtype::bf16, dtype::i32, dtype::i64, dtype::u8}) {
    std::vector<unsigned char> bytes(4 * aisp::dtype_size(type));
    aisp::fill_poison(type, bytes.data(), 4);
    EXPECT_TRUE(aisp::is_poison(type, bytes.data(), 3)) << aisp::dtype_name(type);
    aisp::store_from_double(type, bytes.data(), 3, 3.0);
    EXPECT_FALSE(aisp::is_poison(type, bytes.data(), 3)) << aisp::dtype_name(type);
  }
}

TEST(default_tolerance, follows_the_validity_table) {
  EXPECT_EQ(aisp::verify::default_tolerance(dtype::f32).rtol, 1e-5);
  EXPECT_EQ(aisp::verify::default_tolerance(dtype::bf16).rtol, 1.6e-2);
  EXPECT_EQ(aisp::verify::default_tolerance(dtype::f16).rtol, 1e-3);
  EXPECT_EQ(aisp::verify::default_tolerance(dtype::i32).atol, 0.0);
}

}  // namespace

namespace {

TEST(golden_store, a_reference_that_drifts_from_its_golden_is_reported_and_a_matching_one_is_not) {
  const auto path = std::filesystem::temp_directory_path() / ("aisp_goldens_" + std::to_string(::getpid()) + ".json");
  std::filesystem::remove(path);
  std::vector<double> reference(1000);
  for (std::size_t i = 0; i < reference.size(); ++i) reference[i] = std::sin(static_cast<double>(i));
  const auto key = aisp::verify::golden_store::key("ch07:copy", "n=1000", "y", 42);
  {
    aisp::verify::golden_store store(path.string());
    EXPECT_EQ(store.find(key), nullptr);
    store.put(key, aisp::verify::fingerprint_of(reference, 42));
    store.save();
  }
  aisp::verify::golden_store reloaded(path.string());
  ASSERT_NE(reloaded.find(key), nullptr);
  EXPECT_EQ(aisp::verify::golden_drift(*reloaded.find(key), aisp::verify::fingerprint_of(reference, 42)), "");
  for (auto& v : reference) v = -v;  // a reference edited to compute something else
  EXPECT_NE(aisp::verify::golden_drift(*reloaded.find(key), aisp::verify::fingerprint_of(reference, 42)), "");
  reference.pop_back();
  EXPECT_NE(aisp::verify::golden_drift(*reloaded.find(key), aisp::verify::fingerprint_of(reference, 42)).find("elements"),
            std::string::npos);
  std::filesystem::remove(path);
}

TEST(golden_store, a_malformed_file_is_a_contract_error) {
  const auto path = std::filesystem::temp_directory_path() / ("aisp_goldens_bad_" + std::to_string(::getpid()) + ".json");
  for (const std::string text : {"{ not json", "[1, 2]", R"({"goldens": [1]})"}) {
    std::ofstream(path) << text;
    EXPECT_THROW(aisp::verify::golden_store store(path.string()), aisp::contract_error) << text;
  }
  // Valid JSON with an entry of the wrong shape: the error names the entry, not the JSON library.
  std::ofstream(path) << R"({"goldens": {"ch07:copy|n=8|y|1": {"elements": "eight", "positions": [], "values": []}}})";
  try {
    aisp::verify::golden_store store(path.string());
    ADD_FAILURE() << "a golden entry whose elements is a string was accepted";
  } catch (const aisp::contract_error& error) {
    EXPECT_NE(std::string(error.what()).find("entry 'ch07:copy|n=8|y|1'"), std::string::npos) << error.what();
  }
  std::filesystem::remove(path);
}

}  // namespace

namespace {

// The bit test (exponent field zero, mantissa not) is the value test (0 < |v| < smallest normal).
TEST(host_count_subnormals, agrees_with_the_value_definition_for_every_float_dtype) {
  std::vector<unsigned char> bytes(1 << 16);
  aisp::fill_random_bytes(7, bytes.data(), bytes.size());
  for (const dtype type : {dtype::f64, dtype::f32, dtype::f16, dtype::bf16, dtype::e4m3, dtype::e5m2, dtype::i32, dtype::u8}) {
    const std::size_t count = bytes.size() / aisp::dtype_size(type);
    std::size_t by_value = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const double v = aisp::load_as_double(type, bytes.data(), i);
      by_value += aisp::dtype_is_float(type) && v != 0 && std::abs(v) < aisp::dtype_smallest_normal(type);
    }
    EXPECT_EQ(aisp::host_count_subnormals(type, bytes.data(), count), by_value) << aisp::dtype_name(type);
  }
}

TEST(compare_output, a_large_output_split_across_threads_reports_the_first_mismatches_in_index_order) {
  const std::size_t count = std::size_t{1} << 23;
  std::vector<float> values(count, 1.0f);
  const std::vector<double> expected(count, 1.0);
  for (const std::size_t at : {count - 3, count / 2 + 1, std::size_t{17}}) values[at] = 2.0f;
  std::vector<unsigned char> raw(count * sizeof(float));
  std::memcpy(raw.data(), values.data(), raw.size());
  const auto result = aisp::verify::compare_output("y", dtype::f32, raw, expected, aisp::verify::default_tolerance(dtype::f32));
  EXPECT_EQ(result.failing, 3u);
  ASSERT_EQ(result.first_mismatches.size(), 3u);
  EXPECT_EQ(result.first_mismatches[0].index, 17u);
  EXPECT_EQ(result.first_mismatches[1].index, count / 2 + 1);
  EXPECT_EQ(result.first_mismatches[2].index, count - 3);
  EXPECT_NEAR(result.rel_l2_error, std::sqrt(3.0 / static_cast<double>(count)), 1e-12);
  EXPECT_EQ(result.reason_code, "O3");
}

}  // namespace
