// The validity matrix (docs/validity.md, embedded at build time): every way a benchmark can lie,
// what aisp does about it, the fixture that proves it. `aisp bench explain` reads it, and so
// will the dashboard and the MCP server (issue 23).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace aisp {

struct validity_row {
  std::string code;        // T1 ... X8
  std::string issue;       // the way a benchmark lies
  std::string protection;  // what aisp does: the check names in backquotes
  std::string fixture;     // the planted cheat that proves it, or "—"
  std::string status;      // caught, design, caught (gpu), recorded (gpu), not covered...
  int line = 0;            // in the markdown, from 1
};

// The rows of the matrix's table, in its order: table lines whose first cell is a row code (a
// capital and digits). A code row without exactly 5 cells is left out and, when `problems` is
// given, named there ("line 12 has 4 cells, not 5"); tests/cheats/validity_matrix_test.cpp
// holds docs/validity.md to having none.
[[nodiscard]] const std::vector<validity_row>& validity_catalogue();
[[nodiscard]] std::vector<validity_row> parse_validity_rows(std::string_view markdown,
                                                            std::vector<std::string>* problems = nullptr);

// Rows for a query: a code (case-insensitive, "s2"), else every row whose protection names the
// check in backquotes ("outliers" finds `outliers`). Empty when nothing matches.
[[nodiscard]] std::vector<validity_row> explain_check(std::string_view query);

}  // namespace aisp
