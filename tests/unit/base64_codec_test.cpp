// The base64 codec the pair host's fp64 buffers travel in (Note [untrusted pairs]): RFC 4648's
// vectors, every padding length, and doubles back to the bit, NaN and infinities included.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/base64_codec.hpp"

namespace {

TEST(base64_codec, encodes_the_rfc_4648_vectors_and_decodes_them_back) {
  const std::vector<std::pair<std::string, std::string>> vectors{{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                                                  {"foo", "Zm9v"}, {"foob", "Zm9vYg=="},  {"fooba", "Zm9vYmE="},
                                                                  {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(aisp::base64_encode(plain.data(), plain.size()), encoded) << plain;
    const auto bytes = aisp::base64_decode(encoded);
    EXPECT_EQ(std::string(bytes.begin(), bytes.end()), plain) << encoded;
  }
}

TEST(base64_codec, carries_doubles_to_the_bit) {
  const std::vector<double> values{0.0, -0.0, 1.0 / 3.0, 5e-324, -1.7976931348623157e308, std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::quiet_NaN()};
  const auto bytes = aisp::base64_decode(aisp::base64_encode(values.data(), values.size() * sizeof(double)));
  ASSERT_EQ(bytes.size(), values.size() * sizeof(double));
  EXPECT_EQ(std::memcmp(bytes.data(), values.data(), bytes.size()), 0);
}

TEST(base64_codec, refuses_text_that_is_not_base64) {
  EXPECT_THROW((void)aisp::base64_decode("Zm9"), std::invalid_argument);   // not a multiple of 4
  EXPECT_THROW((void)aisp::base64_decode("Zm9*"), std::invalid_argument);  // outside the alphabet
}

}  // namespace
