// The host side of issue 15's judge: call seeds and fills, the size drawn at run time, the
// non-integer input values, and the math-unit evidence read from SASS and kernel names.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <sstream>
#include <vector>

#include "aisp/check.hpp"
#include "audit/math_unit_evidence.hpp"
#include "harness/call_fill.hpp"
#include "runner/drawn_size.hpp"
#include "runner/sampling_rounds.hpp"
#include "support/element_codec.hpp"
#include "support/seeded_fill.hpp"

namespace {

using aisp::dtype;
using aisp::math_unit;

TEST(call_seeds, every_call_of_a_batch_and_every_batch_differ) {
  std::set<std::uint64_t> seen;
  for (std::uint64_t base : {1ull, 2ull, 0xDEADull}) {
    for (std::uint64_t i = 0; i < 64; ++i) seen.insert(aisp::call_seed(base, i));
  }
  EXPECT_EQ(seen.size(), 3u * 64u);
}

TEST(output_fill, a_pattern_or_the_poison_is_found_again_and_written_elements_are_not) {
  for (const bool poison : {false, true}) {
    std::vector<float> y(1000);
    const aisp::output_fill fill{77, poison};
    aisp::host_fill_output(dtype::f32, fill, y.data(), y.size());
    EXPECT_EQ(aisp::host_count_fill(dtype::f32, fill, y.data(), y.size(), 10).count, 1000u);
    for (std::size_t i = 0; i < 1000; i += 2) y[i] = 1.5f;
    const auto matches = aisp::host_count_fill(dtype::f32, fill, y.data(), y.size(), 10);
    EXPECT_EQ(matches.count, 500u);
    ASSERT_EQ(matches.first.size(), 10u);
    EXPECT_EQ(matches.first.front(), 1u);
  }
}

TEST(output_fill, patterns_of_two_seeds_differ_and_match_fill_random_bytes) {
  std::vector<unsigned char> a(64);
  std::vector<unsigned char> b(64);
  aisp::host_fill_output(dtype::u8, {1, false}, a.data(), a.size());
  aisp::host_fill_output(dtype::u8, {2, false}, b.data(), b.size());
  EXPECT_NE(a, b);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], aisp::random_byte(1, i));
}

TEST(input_values, non_integers_replace_small_integers_only_in_float_buffers) {
  aisp::buffer_spec ints{"x", dtype::f32, aisp::buffer_role::input, {}, aisp::init_distribution::small_integers, {}, aisp::buffer_meaning::data, {}};
  EXPECT_EQ(aisp::effective_init(ints, aisp::input_values::non_integers), aisp::init_distribution::uniform_signed);
  EXPECT_EQ(aisp::effective_init(ints, aisp::input_values::declared), aisp::init_distribution::small_integers);
  aisp::buffer_spec index{"i", dtype::i32, aisp::buffer_role::input, {}, aisp::init_distribution::small_integers, {}, aisp::buffer_meaning::data, {}};
  EXPECT_EQ(aisp::effective_init(index, aisp::input_values::non_integers), aisp::init_distribution::small_integers);
  aisp::buffer_spec unit{"u", dtype::f32, aisp::buffer_role::input, {}, aisp::init_distribution::uniform_unit, {}, aisp::buffer_meaning::data, {}};
  EXPECT_EQ(aisp::effective_init(unit, aisp::input_values::exact_integers), aisp::init_distribution::small_integers);
}

aisp::pair sized_pair() {
  aisp::pair declared("test:drawn");
  declared.benchmark_size({{"m", 4096}, {"n", 4096}, {"k", 8}})
      .validation_size({{"m", 64}, {"n", 64}, {"k", 8}})
      .validation_size({{"m", 128}, {"n", 128}, {"k", 8}})
      .held_out_size({{"m", 192}, {"n", 192}, {"k", 8}});
  return declared;
}

TEST(drawn_size, stays_in_the_envelope_keeps_alignment_fixed_and_tied_parameters) {
  const auto declared = sized_pair();
  std::mt19937_64 entropy(5);
  std::set<std::int64_t> values;
  for (int draw = 0; draw < 200; ++draw) {
    const auto drawn = aisp::draw_held_out_size(declared, entropy);
    ASSERT_TRUE(drawn.has_value());
    const auto m = drawn->get("m");
    EXPECT_GE(m, 64);
    EXPECT_LE(m, 192);
    EXPECT_EQ(m % 64, 0);
    EXPECT_EQ(drawn->get("n"), m) << "m and n are equal in every declared size: they stay tied";
    EXPECT_EQ(drawn->get("k"), 8) << "a parameter that never varies keeps its value";
    EXPECT_EQ(drawn->kind, aisp::workload_kind::held_out);
    values.insert(m);
  }
  EXPECT_EQ(values.size(), 3u) << "64, 128 and 192 are all drawn";
}

TEST(drawn_size, ragged_sizes_allow_any_value_and_one_size_allows_none) {
  aisp::pair ragged("test:ragged");
  ragged.benchmark_size({{"n", 1 << 20}}).validation_size({{"n", 1}}).validation_size({{"n", 1000}}).held_out_size({{"n", 1003}});
  std::mt19937_64 entropy(9);
  std::set<std::int64_t> values;
  for (int draw = 0; draw < 100; ++draw) values.insert(aisp::draw_held_out_size(ragged, entropy)->get("n"));
  EXPECT_GT(values.size(), 50u);
  EXPECT_GE(*values.begin(), 1);
  EXPECT_LE(*values.rbegin(), 1003);
  aisp::pair single("test:single");
  single.benchmark_size({{"n", 4096}}).validation_size({{"n", 7}});
  EXPECT_FALSE(aisp::draw_held_out_size(single, entropy).has_value());
}

TEST(math_unit_evidence, sass_tensor_instructions_name_their_unit) {
  std::istringstream sass(R"(
	code for sm_90a
		Function : _Z6simplePfS_
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   FFMA R2, R3, R4, R5 ;
		Function : _Z4wgmmaPK13__nv_bfloat16
        /*0100*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24, gsb0 ;
		Function : _Z3mmaPK6__half
        /*0100*/              @P0  HMMA.16816.F32 R4, R8, R12, R4 ;
		Function : _Z4tf32Pf
        /*0100*/                   HMMA.1684.F32.TF32 R4, R8, R12, R4 ;
		Function : _Z3fp8Ph
        /*0100*/                   QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24 ;
		Function : _Z10dequantizePKh
        /*0100*/                   F2FP.F16.E4M3.UNPACK_B R4, R2 ;
        /*0110*/                   HADD2.F32 R5, -RZ, R4.H0_H0 ;
		Function : _Z7mma_fp8Ph
        /*0100*/                   HMMA.16832.F32.E4M3.E4M3 R4, R8, R12, R4 ;
)");
  const auto table = aisp::parse_sass_math_units(sass);
  ASSERT_EQ(table.size(), 7u);
  EXPECT_TRUE(table.at("_Z10dequantizePKh").units.empty()) << "widening fp8 codes on the CUDA cores is no fp8 math";
  EXPECT_EQ(table.at("_Z7mma_fp8Ph").units, std::set<math_unit>{math_unit::fp8_tensor});
  EXPECT_TRUE(table.at("_Z6simplePfS_").units.empty());
  EXPECT_EQ(table.at("_Z4wgmmaPK13__nv_bfloat16").units, std::set<math_unit>{math_unit::bf16_tensor});
  EXPECT_EQ(table.at("_Z3mmaPK6__half").units, std::set<math_unit>{math_unit::fp16_tensor});
  EXPECT_EQ(table.at("_Z4tf32Pf").units, std::set<math_unit>{math_unit::tf32_tensor});
  EXPECT_EQ(table.at("_Z3fp8Ph").units, std::set<math_unit>{math_unit::fp8_tensor});
}

TEST(math_unit_evidence, merged_tables_keep_every_kernel_and_the_union_of_a_shared_kernels_units) {
  aisp::sass_math_table into{{"_Z6simplePfS_", {}}, {"_Z4gemmPv", {{math_unit::bf16_tensor}, 4, 0}}};
  const aisp::sass_math_table from{{"_Z4gemmPv", {{math_unit::fp8_tensor}, 2, 2}}, {"_Z4tf32Pf", {{math_unit::tf32_tensor}}}};
  aisp::merge_sass_tables(into, from);
  ASSERT_EQ(into.size(), 3u);
  EXPECT_TRUE(into.at("_Z6simplePfS_").units.empty());
  EXPECT_EQ(into.at("_Z4gemmPv").units, (std::set<math_unit>{math_unit::bf16_tensor, math_unit::fp8_tensor}));
  EXPECT_EQ(into.at("_Z4tf32Pf").units, std::set<math_unit>{math_unit::tf32_tensor});
  EXPECT_EQ(into.at("_Z4gemmPv").fp32_ops, 6) << "a kernel in two cubins counts both";
  EXPECT_EQ(into.at("_Z4gemmPv").flushed_ops, 2);
}

// Note [device fast math]: a kernel whose FP32 arithmetic is mostly .FTZ was built flush-to-zero
// (nvcc --use_fast_math); an intrinsic's own flushed multiply among plain operations is not.
TEST(math_unit_evidence, a_kernel_built_flush_to_zero_is_told_from_one_using_an_intrinsic) {
  std::istringstream sass(R"(
		Function : _Z8fastmathPfS_
        /*0080*/                   FFMA.FTZ R5, R2, 4, R3 ;
        /*0090*/              @!P0 FMUL.FTZ R5, R5, 0.5 ;
        /*00a0*/                   FADD.FTZ R6, R5, 1 ;
        /*00b0*/                   MUFU.RCP R7, R6 ;
		Function : _Z9intrinsicPfS_
        /*0080*/                   FMUL.FTZ R5, R2, 1.4426950216293334961 ;
        /*0090*/                   MUFU.EX2 R5, R5 ;
        /*00a0*/                   FFMA R6, R5, 2, R3 ;
        /*00b0*/                   FADD R6, R6, 1 ;
        /*00c0*/                   FMUL32I R7, R6, 3 ;
		Function : _Z5plainPfS_
        /*0080*/                   FFMA R5, R2, 4, R3 ;
        /*0090*/                   IADD3 R6, R5, 1, RZ ;
)");
  const auto table = aisp::parse_sass_math_units(sass);
  EXPECT_EQ(table.at("_Z8fastmathPfS_").fp32_ops, 3);
  EXPECT_EQ(table.at("_Z8fastmathPfS_").flushed_ops, 3);
  EXPECT_TRUE(table.at("_Z8fastmathPfS_").flushes_subnormals());
  EXPECT_EQ(table.at("_Z9intrinsicPfS_").fp32_ops, 4);
  EXPECT_FALSE(table.at("_Z9intrinsicPfS_").flushes_subnormals());
  EXPECT_EQ(table.at("_Z5plainPfS_").fp32_ops, 1);
  EXPECT_FALSE(table.at("_Z5plainPfS_").flushes_subnormals());
}

TEST(math_unit_evidence, library_kernel_names_say_their_inputs_type_or_nothing) {
  EXPECT_EQ(aisp::library_kernel_math_unit("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"), math_unit::bf16_tensor);
  EXPECT_EQ(aisp::library_kernel_math_unit("nvjet_sm90_hsh_128x256_64x4_2x1_v_bz_coopB_NNT"), math_unit::fp16_tensor);
  EXPECT_EQ(aisp::library_kernel_math_unit("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32"), math_unit::tf32_tensor);
  EXPECT_EQ(aisp::library_kernel_math_unit("cutlass3x_sm90_tensorop_gemm_e4m3_e4m3_f32"), math_unit::fp8_tensor);
  EXPECT_EQ(aisp::library_kernel_math_unit("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1"), std::nullopt)
      << "cuDNN's generated attention kernels say f16 for bf16 too";
  EXPECT_FALSE(aisp::library_kernel_math_unit("nvjet_sm90_sss_128x64_64x5_2x1_v_bz_NNN").has_value());
  EXPECT_FALSE(aisp::library_kernel_math_unit("_Z13affine_kernelPKfPfli").has_value());
}

TEST(fixed_inputs, needs_a_reason_and_is_recorded_with_it) {
  aisp::pair declared("test:fixed");
  EXPECT_FALSE(declared.has_fixed_inputs());
  EXPECT_THROW(declared.fixed_inputs(""), aisp::contract_error);
  declared.fixed_inputs("a lookup table the kernel specializes on");
  EXPECT_TRUE(declared.has_fixed_inputs());
  EXPECT_EQ(declared.fixed_inputs_reason(), "a lookup table the kernel specializes on");
}

TEST(host_excess, is_the_median_of_host_span_minus_event_span_per_sample) {
  std::vector<aisp::sample_record> samples;
  for (double wall_us : {108.0, 109.0, 400.0, 110.0, 108.5}) {
    aisp::sample_record s;
    s.duration_s = 50e-6;  // two calls of 50 us
    s.calls = 2;
    s.host_wall_s = wall_us * 1e-6;
    samples.push_back(s);
  }
  EXPECT_NEAR(aisp::median_host_excess_s(samples), 9e-6, 1e-9);
  EXPECT_EQ(aisp::median_host_excess_s({}), 0.0);
}

}  // namespace
