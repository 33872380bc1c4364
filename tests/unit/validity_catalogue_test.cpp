// The validity matrix embedded in the binary (docs/validity.md at build time), as `aisp bench
// explain` reads it.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "analysis/validity_catalogue.hpp"

namespace aisp {
namespace {

TEST(validity_catalogue, holds_every_row_of_the_matrix_once) {
  const auto& rows = validity_catalogue();
  EXPECT_EQ(rows.size(), 104u);  // T1-T7, O1-O10, W1-W12, L1-L7, M1-M7, C1-C10, K1-K7, D1-D8, E1-E12, S1-S8, V1-V8, X1-X8
  std::set<std::string> codes;
  for (const auto& row : rows) {
    EXPECT_TRUE(codes.insert(row.code).second) << row.code;
    EXPECT_FALSE(row.issue.empty()) << row.code;
    EXPECT_FALSE(row.status.empty()) << row.code;
  }
}

TEST(validity_catalogue, finds_a_row_by_code_or_by_the_check_it_names) {
  const auto by_code = explain_check(" s2 ");
  ASSERT_EQ(by_code.size(), 1u);
  EXPECT_EQ(by_code[0].code, "S2");
  EXPECT_EQ(by_code[0].issue, "outlier injection");
  const auto by_check = explain_check("outliers");
  ASSERT_FALSE(by_check.empty());
  EXPECT_EQ(by_check[0].code, "S2");
  const auto escaped = explain_check("escaped-kernel");
  EXPECT_GE(escaped.size(), 2u);  // T1 and C4 both name it
  EXPECT_TRUE(explain_check("no-such-check").empty());
}

TEST(validity_catalogue, parses_only_table_rows_with_a_code) {
  const auto rows = parse_validity_rows("text\n| code | issue | protection | fixture | status |\n|---|---|---|---|---|\n"
                                        "| Z9 | a lie | `a-check` | — | design |\n| not a row |\n");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].code, "Z9");
  EXPECT_EQ(rows[0].protection, "`a-check`");
  EXPECT_EQ(rows[0].line, 4);
}

TEST(validity_catalogue, names_a_code_row_that_lost_a_cell_instead_of_dropping_it_quietly) {
  std::vector<std::string> problems;
  const auto rows = parse_validity_rows("| A1 | a lie | `x` | — | design |\n| B2 | a lie | `y` | design |\n"
                                        "| C3 | a lie | `z` | — | caught\n",
                                        &problems);
  ASSERT_EQ(rows.size(), 2u);  // C3's last cell has no closing bar and still counts
  EXPECT_EQ(rows[1].code, "C3");
  EXPECT_EQ(rows[1].status, "caught");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "line 2 has 4 cells, not 5");
}

}  // namespace
}  // namespace aisp
