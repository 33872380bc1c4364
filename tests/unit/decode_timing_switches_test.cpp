// labs/decode's timing switches (labs/decode/timing_switches.hpp): what AISP_DECODE_PROBE_ROWS
// names parses to its launches (Note [row probes]), an on/off switch takes 0 or 1, and anything
// else fails naming the variable.
#include <gtest/gtest.h>

#include <exception>
#include <string>

#include "../../labs/decode/timing_switches.hpp"

namespace {

using aisp::decode::parse_on_off;
using aisp::decode::parse_row_probes;
using aisp::decode::row_probe;

unsigned bits(row_probe p) { return static_cast<unsigned>(p); }

// `parse` must throw, its message naming `variable`.
template <class Parse>
void expect_refused(const char* variable, const char* malformed, Parse parse) {
  try {
    (void)parse(malformed);
    ADD_FAILURE() << variable << " accepted '" << malformed << "'";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(variable), std::string::npos) << e.what();
  }
}

TEST(decode_timing_switches, probe_names_parse_to_their_launches_and_none_is_the_default) {
  EXPECT_EQ(parse_row_probes(nullptr), 0u);
  EXPECT_EQ(parse_row_probes(""), 0u);
  EXPECT_EQ(parse_row_probes("attention"), bits(row_probe::attention));
  EXPECT_EQ(parse_row_probes("x,stores"), bits(row_probe::x) | bits(row_probe::stores));
  EXPECT_EQ(parse_row_probes("attention,rope,swiglu,x,stores"),
            bits(row_probe::attention) | bits(row_probe::rope) | bits(row_probe::swiglu) | bits(row_probe::x) | bits(row_probe::stores));
}

TEST(decode_timing_switches, an_unknown_or_empty_probe_name_fails_with_it) {
  for (const char* malformed : {"norm", "attention,", ",x", "x,,stores", "Attention"}) {
    expect_refused("AISP_DECODE_PROBE_ROWS", malformed, parse_row_probes);
  }
}

TEST(decode_timing_switches, an_on_off_switch_takes_0_or_1_and_is_off_unset) {
  EXPECT_FALSE(parse_on_off("AISP_DECODE_ATTENTION_EARLY", nullptr));
  EXPECT_FALSE(parse_on_off("AISP_DECODE_ATTENTION_EARLY", "0"));
  EXPECT_TRUE(parse_on_off("AISP_DECODE_ATTENTION_EARLY", "1"));
  for (const char* malformed : {"", "2", "on", "true", "1 "}) {
    expect_refused("AISP_DECODE_ATTENTION_EARLY", malformed, [](const char* v) { return parse_on_off("AISP_DECODE_ATTENTION_EARLY", v); });
  }
}

}  // namespace
