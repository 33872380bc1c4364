// `aisp tools` arithmetic: KV-cache bytes, the batch that fits, the price of a token.
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "aisp/check.hpp"
#include "analysis/serving_math.hpp"

namespace aisp {
namespace {

TEST(serving_math, kv_cache_of_llama_70b_is_320_kib_a_token_in_bf16) {
  const auto shape = find_model_shape("llama-3.1-70b");
  ASSERT_TRUE(shape.has_value());
  EXPECT_EQ(kv_bytes_per_token(*shape, kv_dtype_bytes("bf16")), 2 * 80 * 8 * 128 * 2);  // 327,680 B
  EXPECT_EQ(kv_bytes_per_token(*shape, kv_dtype_bytes("fp8")), 2 * 80 * 8 * 128);
  EXPECT_FALSE(find_model_shape("gpt-9").has_value());
  EXPECT_THROW((void)kv_dtype_bytes("int3"), contract_error);
  EXPECT_THROW((void)kv_bytes_per_token(model_shape{"broken", 0, 8, 128}, 2), contract_error);
}

TEST(serving_math, sequences_that_fit_round_down_and_never_go_negative) {
  const std::int64_t per_token = 327680;
  const std::int64_t gib = std::int64_t{1} << 30;
  EXPECT_EQ(sequences_that_fit(60 * gib, per_token, 8192), 24);  // 2.5 GiB a sequence
  EXPECT_EQ(sequences_that_fit(2 * gib, per_token, 8192), 0);
  EXPECT_EQ(sequences_that_fit(-1, per_token, 8192), 0);
  EXPECT_EQ(sequences_that_fit(60 * gib, per_token, std::int64_t{1} << 60), 0) << "a sequence past int64 bytes fits nowhere";
  EXPECT_THROW((void)sequences_that_fit(gib, per_token, 0), contract_error);
}

TEST(serving_math, a_token_costs_the_gpu_seconds_it_takes) {
  // 2.5 USD an hour at 2,500 tokens/s: 2.5 / 3600 / 2500 * 1e6 = 0.2778 USD per million tokens.
  EXPECT_NEAR(usd_per_million_tokens(2.5, 2500, 1), 0.27778, 1e-5);
  EXPECT_NEAR(usd_per_million_tokens(2.5, 2500, 8), 8 * 0.27778, 1e-4);
  EXPECT_THROW((void)usd_per_million_tokens(0, 2500, 1), contract_error);
}

TEST(serving_math, the_price_comes_from_the_flag_or_the_table_never_a_default) {
  const std::string table = ::testing::TempDir() + "/prices.json";
  std::ofstream(table) << R"({"usd_per_gpu_hour": {"h100": 3.0, "h200": null}})";
  EXPECT_DOUBLE_EQ(usd_per_gpu_hour("h100", table, 0), 3.0);
  EXPECT_DOUBLE_EQ(usd_per_gpu_hour("h100", table, 1.5), 1.5);
  EXPECT_THROW((void)usd_per_gpu_hour("h200", table, 0), contract_error);  // null: unknown
  EXPECT_THROW((void)usd_per_gpu_hour("h100", table + ".missing", 0), contract_error);
}

}  // namespace
}  // namespace aisp
