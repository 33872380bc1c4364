// labs/decode's row probes (labs/decode/row_probes.hpp, Note [row probes]): what
// AISP_DECODE_PROBE_ROWS names parses to its launches, and a name it does not know fails with it.
#include <gtest/gtest.h>

#include <exception>
#include <string>

#include "../../labs/decode/row_probes.hpp"

namespace {

using aisp::decode::parse_row_probes;
using aisp::decode::row_probe;

unsigned bits(row_probe p) { return static_cast<unsigned>(p); }

TEST(decode_row_probes, names_parse_to_their_launches_and_none_is_the_default) {
  EXPECT_EQ(parse_row_probes(nullptr), 0u);
  EXPECT_EQ(parse_row_probes(""), 0u);
  EXPECT_EQ(parse_row_probes("attention"), bits(row_probe::attention));
  EXPECT_EQ(parse_row_probes("x,stores"), bits(row_probe::x) | bits(row_probe::stores));
  EXPECT_EQ(parse_row_probes("attention,rope,swiglu,x,stores"),
            bits(row_probe::attention) | bits(row_probe::rope) | bits(row_probe::swiglu) | bits(row_probe::x) | bits(row_probe::stores));
}

TEST(decode_row_probes, an_unknown_or_empty_name_fails_with_it) {
  for (const char* malformed : {"norm", "attention,", ",x", "x,,stores", "Attention"}) {
    try {
      (void)parse_row_probes(malformed);
      ADD_FAILURE() << "AISP_DECODE_PROBE_ROWS accepted '" << malformed << "'";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("AISP_DECODE_PROBE_ROWS"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
