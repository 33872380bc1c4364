// Note [derived inputs] (aisp/buffer_spec.hpp): an input that always holds another input's
// values in its own dtype, in the worker's store (host backend here) and in the judge's
// regenerated inputs alike.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "harness/buffer_store.hpp"
#include "support/element_codec.hpp"
#include "support/seeded_fill.hpp"
#include "verify/reference_runner.hpp"

namespace {

using aisp::dtype;

aisp::pair cache_pair() {
  return aisp::pair("tests:derived")
      .benchmark_size({{"n", 1000}})
      .input("k", dtype::bf16, {"n"})
      .derived_input("k_fp8", dtype::e4m3, "k")
      .output("y", dtype::f32, {"n"});
}

aisp::workload size_of(std::int64_t n) { return aisp::workload{aisp::workload_kind::validation, {{"n", n}}}; }

// Every element of `derived` is the e4m3 rounding of the same element of `source` (bf16).
void expect_follows(const aisp::buffer_store& store) {
  const auto& source = store.find("k");
  const auto& derived = store.find("k_fp8");
  ASSERT_EQ(source.num_elements, derived.num_elements);
  std::size_t differing = 0;
  for (std::size_t i = 0; i < source.num_elements; ++i) {
    unsigned char expected = 0;
    aisp::store_from_double(dtype::e4m3, &expected, 0, aisp::derived_value(dtype::e4m3, aisp::load_as_double(dtype::bf16, source.data, i)));
    differing += static_cast<const unsigned char*>(derived.data)[i] != expected;
  }
  EXPECT_EQ(differing, 0U);
  EXPECT_EQ(store.count_subnormals(derived, nullptr), 0U) << "the harness never draws subnormal inputs";
}

}  // namespace

TEST(derived_inputs, follow_their_source_through_fills_fresh_calls_and_element_writes) {
  const auto declared = cache_pair();
  aisp::buffer_store store(declared, size_of(1000), aisp::backend::host);
  store.fill_inputs(7);
  expect_follows(store);
  store.refresh_inputs(8, nullptr);
  expect_follows(store);
  store.write_element(store.find("k"), 3, 0.4);
  EXPECT_DOUBLE_EQ(aisp::load_as_double(dtype::e4m3, store.find("k_fp8").data, 3), 0.40625)
      << "0.4 in bf16 is 0.400390625, which e4m3 rounds to 0.40625";
  expect_follows(store);
  EXPECT_THROW(store.write_element(store.find("k_fp8"), 0, 0.5), aisp::contract_error) << "only the source is written";
}

TEST(derived_inputs, the_judges_regenerated_inputs_derive_the_same_way_overrides_included) {
  const auto declared = cache_pair();
  const auto work = size_of(257);
  aisp::verify::reference_inputs inputs{11, aisp::input_values::declared, {{"k", 5, -0.3}}};
  const auto values = aisp::verify::generate_inputs(declared, work, inputs);
  aisp::buffer_store store(declared, work, aisp::backend::host);
  store.fill_inputs(11);
  store.write_element(store.find("k"), 5, -0.3);
  const auto& fp8 = values.at("k_fp8");
  ASSERT_EQ(fp8.size(), 257U);
  for (std::size_t i = 0; i < fp8.size(); ++i) {
    ASSERT_EQ(fp8[i], aisp::load_as_double(dtype::e4m3, store.find("k_fp8").data, i)) << "element " << i;
  }
  EXPECT_NE(values.at("k")[5], fp8[5]) << "-0.3 rounds differently in bf16 and e4m3";
}

TEST(derived_inputs, values_below_the_smallest_normal_become_signed_zeros) {
  EXPECT_EQ(aisp::derived_value(dtype::e4m3, 0.4), 0.40625);
  EXPECT_EQ(aisp::derived_value(dtype::e4m3, 0x1p-6), 0x1p-6) << "the smallest normal stays";
  EXPECT_EQ(aisp::derived_value(dtype::e4m3, 0.0155), 0x1p-6) << "rounds up to a normal: kept";
  EXPECT_EQ(aisp::derived_value(dtype::e4m3, 0.01), 0.0);
  EXPECT_TRUE(std::signbit(aisp::derived_value(dtype::e4m3, -0.01)));
  EXPECT_EQ(aisp::derived_value(dtype::bf16, 0.3), aisp::derived_value(dtype::bf16, aisp::derived_value(dtype::bf16, 0.3)));
}

TEST(derived_inputs, name_an_input_declared_before_them_that_is_not_derived) {
  EXPECT_THROW(aisp::pair("tests:bad").input("k", dtype::bf16, {"n"}).derived_input("v8", dtype::e4m3, "v"),
               aisp::contract_error);
  EXPECT_THROW(aisp::pair("tests:bad").output("y", dtype::f32, {"n"}).derived_input("y8", dtype::e4m3, "y"),
               aisp::contract_error);
  EXPECT_THROW(aisp::pair("tests:bad")
                   .input("k", dtype::bf16, {"n"})
                   .derived_input("k8", dtype::e4m3, "k")
                   .derived_input("k5", dtype::e5m2, "k8"),
               aisp::contract_error);
}

// An int8 copy: values in [-1, 1) times 127, rounded to nearest, saturated to [-127, 127].
TEST(derived_inputs, an_i8_copy_is_the_scaled_value_rounded_and_saturated) {
  EXPECT_EQ(aisp::derived_value(dtype::i8, 0.5, 127.0), 64.0);  // 63.5: to nearest even
  EXPECT_EQ(aisp::derived_value(dtype::i8, -0.999, 127.0), -127.0);
  EXPECT_EQ(aisp::derived_value(dtype::i8, 0.003, 127.0), 0.0);
  EXPECT_EQ(aisp::derived_value(dtype::i8, 3.0, 127.0), 127.0) << "saturates, never wraps";
  EXPECT_EQ(aisp::derived_value(dtype::i8, -3.0, 127.0), -127.0) << "-128 is the poison, never stored";
  signed char poison = 0;
  aisp::fill_poison(dtype::i8, &poison, 1);
  EXPECT_TRUE(aisp::is_poison(dtype::i8, &poison, 0));
  EXPECT_EQ(aisp::dtype_from_name("i8"), dtype::i8);
}

TEST(derived_inputs, a_scaled_copy_follows_its_source_in_the_store) {
  const auto declared = aisp::pair("tests:derived_i8")
                            .benchmark_size({{"n", 1000}})
                            .input("w", dtype::bf16, {"n"})
                            .derived_input("w_i8", dtype::i8, "w", 127.0)
                            .output("y", dtype::f32, {"n"});
  aisp::buffer_store store(declared, size_of(257), aisp::backend::host);
  store.fill_inputs(7);
  const auto& source = store.find("w");
  const auto& derived = store.find("w_i8");
  std::size_t nonzero = 0;
  for (std::size_t i = 0; i < source.num_elements; ++i) {
    const double expected = std::clamp(std::nearbyint(127.0 * aisp::load_as_double(dtype::bf16, source.data, i)), -127.0, 127.0);
    ASSERT_EQ(aisp::load_as_double(dtype::i8, derived.data, i), expected) << i;
    nonzero += expected != 0.0;
  }
  EXPECT_GT(nonzero, 200U) << "the codes span the int8 range, not a few values";
  EXPECT_THROW(static_cast<void>(aisp::pair("tests:bad_scale").benchmark_size({{"n", 1}}).input("w", dtype::bf16, {"n"}).derived_input("w_i8", dtype::i8, "w", 0.0)),
               aisp::contract_error);
}

// Note [no subnormal draws]: a uniform draw into a narrow float type never lands on a subnormal.
TEST(derived_inputs, uniform_draws_into_narrow_floats_hold_no_subnormal) {
  constexpr std::size_t n = 1 << 16;
  for (const dtype type : {dtype::e4m3, dtype::e5m2, dtype::f16}) {
    std::vector<unsigned char> bytes(n * aisp::dtype_size(type));
    aisp::fill_seeded(type, aisp::init_distribution::uniform_signed, 99, bytes.data(), n);
    std::size_t subnormal = 0;
    std::size_t zero = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double v = aisp::load_as_double(type, bytes.data(), i);
      subnormal += v != 0.0 && std::fabs(v) < aisp::dtype_smallest_normal(type);
      zero += v == 0.0;
    }
    EXPECT_EQ(subnormal, 0U) << aisp::dtype_name(type);
    EXPECT_LT(zero, n / 20) << aisp::dtype_name(type) << ": flushed draws stay rare";
  }
}

// Note [work during the fill] (host_sampler.cpp): inputs staged for a seed are copied in by the
// next refresh of that seed, byte for byte what drawing them in place gives, derived inputs
// included; a refresh of another seed draws in place.
TEST(derived_inputs, staged_inputs_are_the_ones_a_refresh_of_their_seed_draws) {
  const auto declared = cache_pair();
  aisp::buffer_store drawn(declared, size_of(1000), aisp::backend::host);
  aisp::buffer_store staged(declared, size_of(1000), aisp::backend::host);
  drawn.refresh_inputs(21, nullptr);
  staged.stage_inputs(21);
  const auto before_copy = staged.read(staged.find("k"));
  EXPECT_NE(before_copy, drawn.read(drawn.find("k"))) << "staging leaves the variant's pages alone";
  staged.refresh_inputs(21, nullptr);
  for (const char* name : {"k", "k_fp8"}) EXPECT_EQ(staged.read(staged.find(name)), drawn.read(drawn.find(name))) << name;
  staged.stage_inputs(22);
  staged.refresh_inputs(23, nullptr);
  drawn.refresh_inputs(23, nullptr);
  for (const char* name : {"k", "k_fp8"}) EXPECT_EQ(staged.read(staged.find(name)), drawn.read(drawn.find(name))) << name;
  expect_follows(staged);
}

// Note [a copy's domain] (runner/copy_domain.cpp): the two probes of a variant that may answer
// from a scaled copy. The copy drawn again alone leaves its source; the source moved within the
// copy's rounding leaves the copy, which is still exactly the source's rounding.
TEST(derived_inputs, a_copy_redrawn_alone_and_a_source_moved_within_its_copy) {
  const auto declared = aisp::pair("tests:scaled_copy")
                            .benchmark_size({{"n", 1000}})
                            .input("k", dtype::bf16, {"n"})
                            .derived_input("k_fp8", dtype::e4m3, "k", 448.0)
                            .output("y", dtype::f32, {"n"});
  aisp::buffer_store store(declared, size_of(1000), aisp::backend::host);
  store.fill_inputs(7);
  const auto& source = store.find("k");
  const auto& copy = store.find("k_fp8");
  const auto source_drawn = store.read(source);
  const auto copy_drawn = store.read(copy);

  store.move_source_within_its_copies(source);
  EXPECT_EQ(store.read(copy), copy_drawn) << "the copy is not touched";
  std::size_t moved = 0;
  for (std::size_t i = 0; i < source.num_elements; ++i) {
    const double now = aisp::load_as_double(dtype::bf16, source.data, i);
    moved += now != aisp::load_as_double(dtype::bf16, source_drawn.data(), i);
    ASSERT_EQ(aisp::derived_value(dtype::e4m3, now, 448.0), aisp::load_as_double(dtype::e4m3, copy.data, i))
        << "element " << i << " left its rounding cell";
  }
  EXPECT_GT(moved, source.num_elements / 2) << "most elements have room to move inside an e4m3 cell";

  const auto source_moved = store.read(source);
  store.redraw_copy_alone(copy, 99);
  EXPECT_EQ(store.read(source), source_moved) << "the source is not touched";
  EXPECT_NE(store.read(copy), copy_drawn);
  EXPECT_EQ(store.count_subnormals(copy, nullptr), 0U) << "a copy drawn again is still a copy: no subnormals";

  EXPECT_THROW(store.redraw_copy_alone(source, 1), aisp::contract_error) << "a source is not a copy";
  EXPECT_THROW(store.move_source_within_its_copies(copy), aisp::contract_error) << "a copy has no copies";
}
