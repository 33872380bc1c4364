// The host half of the tensor-core probe: names, FLOP count, layouts and the input encoding.
// measure_tensor_peak itself needs a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "hw/tensor_probe.hpp"
#include "support/element_codec.hpp"

namespace {

using aisp::tensor_precision;

const tensor_precision all_precisions[] = {tensor_precision::bf16, tensor_precision::fp16, tensor_precision::tf32,
                                           tensor_precision::fp8_e4m3};

// e4m3 from the format's definition: 1 sign, 4 exponent (bias 7), 3 mantissa bits; exponent 0 is
// subnormal (mantissa/8 * 2^-6); 0x7F and 0xFF are NaN.
double decode_e4m3(unsigned char bits) {
  const int exponent = (bits >> 3) & 0xF;
  const int mantissa = bits & 0x7;
  if ((bits & 0x7F) == 0x7F) return std::nan("");
  const double magnitude = exponent == 0 ? std::ldexp(mantissa / 8.0, -6) : std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
  return (bits & 0x80) != 0 ? -magnitude : magnitude;
}

std::vector<double> decode(tensor_precision precision, const std::vector<unsigned char>& bytes) {
  std::vector<double> values;
  const std::size_t element_bytes = aisp::tensor_input_element_bytes(precision);
  for (std::size_t offset = 0; offset < bytes.size(); offset += element_bytes) {
    std::uint16_t bits16 = 0;
    float value32 = 0;
    switch (precision) {
      case tensor_precision::bf16:
        std::memcpy(&bits16, &bytes[offset], 2);
        values.push_back(aisp::bf16_bits_to_float(bits16));
        break;
      case tensor_precision::fp16:
        std::memcpy(&bits16, &bytes[offset], 2);
        values.push_back(aisp::half_bits_to_float(bits16));
        break;
      case tensor_precision::tf32:
        std::memcpy(&value32, &bytes[offset], 4);
        values.push_back(value32);
        break;
      case tensor_precision::fp8_e4m3:
        values.push_back(decode_e4m3(bytes[offset]));
        break;
    }
  }
  return values;
}

TEST(tensor_probe_name, gives_each_precision_its_probe_result_name) {
  EXPECT_EQ(aisp::tensor_probe_name(tensor_precision::bf16), "bf16_tensor");
  EXPECT_EQ(aisp::tensor_probe_name(tensor_precision::fp16), "fp16_tensor");
  EXPECT_EQ(aisp::tensor_probe_name(tensor_precision::tf32), "tf32_tensor");
  EXPECT_EQ(aisp::tensor_probe_name(tensor_precision::fp8_e4m3), "fp8_tensor");
}

TEST(gemm_flops, counts_a_multiply_and_an_add_per_term_without_overflowing_32_bits) {
  EXPECT_EQ(aisp::gemm_flops(8192, 8192, 8192), 1099511627776.0);  // 2 * 2^39 = 2^40
  EXPECT_EQ(aisp::gemm_flops(1, 7, 65), 910.0);
  EXPECT_EQ(aisp::gemm_flops(65536, 65536, 65536), 562949953421312.0);  // 2^49
}

TEST(gemm_size_label, writes_a_cube_as_a_power_and_other_shapes_as_m_x_n_x_k) {
  EXPECT_EQ(aisp::gemm_size_label(8192, 8192, 8192), "8192^3");
  EXPECT_EQ(aisp::gemm_size_label(1, 7, 65), "1 x 7 x 65");
}

TEST(tensor_element_bytes, stores_tf32_as_fp32_and_writes_fp8_products_as_bf16) {
  EXPECT_EQ(aisp::tensor_input_element_bytes(tensor_precision::bf16), 2u);
  EXPECT_EQ(aisp::tensor_input_element_bytes(tensor_precision::fp16), 2u);
  EXPECT_EQ(aisp::tensor_input_element_bytes(tensor_precision::tf32), 4u);
  EXPECT_EQ(aisp::tensor_input_element_bytes(tensor_precision::fp8_e4m3), 1u);
  EXPECT_EQ(aisp::tensor_output_element_bytes(tensor_precision::bf16), 2u);
  EXPECT_EQ(aisp::tensor_output_element_bytes(tensor_precision::fp16), 2u);
  EXPECT_EQ(aisp::tensor_output_element_bytes(tensor_precision::tf32), 4u);
  EXPECT_EQ(aisp::tensor_output_element_bytes(tensor_precision::fp8_e4m3), 2u);
}

TEST(tensor_uses_tn_layout, is_true_for_fp8_only_which_cublaslt_requires_in_tn) {
  EXPECT_TRUE(aisp::tensor_uses_tn_layout(tensor_precision::fp8_e4m3));
  EXPECT_FALSE(aisp::tensor_uses_tn_layout(tensor_precision::bf16));
  EXPECT_FALSE(aisp::tensor_uses_tn_layout(tensor_precision::fp16));
  EXPECT_FALSE(aisp::tensor_uses_tn_layout(tensor_precision::tf32));
}

TEST(e4m3_test_decoder, agrees_with_the_format_on_known_codes) {
  EXPECT_EQ(decode_e4m3(0x38), 1.0);
  EXPECT_EQ(decode_e4m3(0xB8), -1.0);
  EXPECT_EQ(decode_e4m3(0x30), 0.5);
  EXPECT_EQ(decode_e4m3(0x7E), 448.0);
  EXPECT_EQ(decode_e4m3(0x01), std::ldexp(1.0, -9));
}

TEST(random_operand_bytes, are_spread_over_minus_one_to_one_in_every_precision_never_constant) {
  constexpr std::size_t count = 4099;  // odd, not a multiple of any thread chunk
  for (const auto precision : all_precisions) {
    SCOPED_TRACE(std::string(aisp::tensor_probe_name(precision)));
    const auto bytes = aisp::random_operand_bytes(precision, 12345, count);
    ASSERT_EQ(bytes.size(), count * aisp::tensor_input_element_bytes(precision));
    const auto values = decode(precision, bytes);
    double sum = 0;
    std::size_t negatives = 0;
    for (const double value : values) {
      ASSERT_TRUE(value >= -1.0 && value <= 1.0) << value;
      sum += value;
      negatives += value < 0 ? 1 : 0;
    }
    // Uniform on [-1, 1]: mean 0 with standard error 0.577 / sqrt(4099) = 0.009.
    EXPECT_LT(std::abs(sum / count), 0.05);
    EXPECT_GT(negatives, count / 3);
    EXPECT_LT(negatives, 2 * count / 3);
    // e4m3 has 113 values in [-1, 1] (codes 0x01..0x38 each side of zero, and zero); the 16- and
    // 32-bit types have thousands.
    const std::set<double> distinct(values.begin(), values.end());
    EXPECT_GT(distinct.size(), precision == tensor_precision::fp8_e4m3 ? 60u : 1000u);
  }
}

TEST(random_operand_bytes, repeat_for_one_stream_and_differ_between_streams) {
  for (const auto precision : all_precisions) {
    SCOPED_TRACE(std::string(aisp::tensor_probe_name(precision)));
    EXPECT_EQ(aisp::random_operand_bytes(precision, 7, 65), aisp::random_operand_bytes(precision, 7, 65));
    EXPECT_NE(aisp::random_operand_bytes(precision, 7, 65), aisp::random_operand_bytes(precision, 8, 65));
  }
}

}  // namespace
