// docs/validity.md is the map from every VALIDITY.md row to its protection and its planted cheat.
// These tests hold it to the truth: every row once, every `caught` row proven by a registered
// fixture with the row's tag, and every fixture accounted for by a `caught` row.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/validity_catalogue.hpp"
#include "cheat_test_support.hpp"

namespace {

// `caught (gpu)`: proven by a GPU fixture (group cheats_gpu, or cheats_multi_gpu for the multi-GPU
// rows), which runs on the device only.
// "recorded (gpu)": a row whose protection is a record, not a failure (C7, C8), tested on the device.
const std::set<std::string> statuses{"caught", "caught (gpu)", "design", "gpu (issue 4)", "not covered", "recorded (gpu)"};

struct matrix_row {
  std::string code;
  std::string issue;
  std::string protection;
  std::string fixture;  // a target, or "" for "—"
  std::string status;
  int line = 0;
};

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

std::string without_backticks(std::string text) {
  std::erase(text, '`');
  return trimmed(text);
}

// The rows of the matrix, read by the parser `aisp bench explain` uses (from the source tree's
// file, so an edit is checked before it is built in); a malformed code row is an error here.
std::vector<matrix_row> read_matrix(std::string& error) {
  const std::string path = std::string(AISP_SOURCE_DIR) + "/docs/validity.md";
  std::ifstream file(path);
  if (!file) {
    error = "cannot read " + path;
    return {};
  }
  std::stringstream text;
  text << file.rdbuf();
  std::vector<std::string> problems;
  std::vector<matrix_row> rows;
  for (const auto& row : aisp::parse_validity_rows(text.str(), &problems)) {
    const std::string fixture = without_backticks(row.fixture);
    rows.push_back({row.code, row.issue, row.protection, fixture == "—" ? "" : fixture, without_backticks(row.status), row.line});
  }
  for (const auto& problem : problems) error += problem + "; ";
  return rows;
}

class validity_matrix : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    rows_ = read_matrix(error);
    ASSERT_TRUE(error.empty()) << error;
    ASSERT_FALSE(rows_.empty());
  }
  std::vector<matrix_row> rows_;
};

TEST_F(validity_matrix, names_every_row_of_the_catalogue_exactly_once) {
  std::map<std::string, int> seen;
  for (const auto& row : rows_) ++seen[row.code];
  for (const auto& code : aisp::cheat_testing::validity_codes()) {
    EXPECT_EQ(seen[code], 1) << code << " must appear exactly once in docs/validity.md";
  }
  for (const auto& [code, count] : seen) {
    EXPECT_TRUE(aisp::cheat_testing::is_validity_code(code)) << code << " is not a VALIDITY.md row";
  }
  EXPECT_EQ(rows_.size(), aisp::cheat_testing::validity_codes().size());
}

TEST_F(validity_matrix, gives_every_row_a_known_status_an_issue_and_a_protection) {
  for (const auto& row : rows_) {
    EXPECT_TRUE(statuses.count(row.status) > 0) << row.code << " (line " << row.line << "): status '" << row.status << "'";
    EXPECT_FALSE(row.issue.empty()) << row.code;
    EXPECT_FALSE(row.protection.empty()) << row.code << ": a row without a protection or reason";
    if (!row.status.starts_with("caught")) {
      EXPECT_TRUE(row.fixture.empty()) << row.code << " names fixture " << row.fixture << " but is not `caught`";
    }
  }
}

TEST_F(validity_matrix, proves_every_caught_row_with_a_fixture_tagged_with_its_code) {
  const auto listing = aisp::cheat_testing::list_fixtures();
  ASSERT_TRUE(listing.error.empty()) << listing.error;
  const auto k4_listing = aisp::cheat_testing::list_fixtures("cheats_k4", aisp::cheat_testing::k4_cheats_binary());
  ASSERT_TRUE(k4_listing.error.empty()) << k4_listing.error;
  std::map<std::string, std::string> code_of;  // target -> tag code
  for (const auto& f : listing.fixtures) code_of[f.target] = f.code;
  for (const auto& f : k4_listing.fixtures) code_of[f.target] = f.code;
  for (const auto& row : rows_) {
    if (row.status != "caught") continue;
    ASSERT_FALSE(row.fixture.empty()) << row.code << " is `caught` but names no fixture";
    const auto found = code_of.find(row.fixture);
    ASSERT_NE(found, code_of.end()) << row.code << ": " << row.fixture << " is not registered in aisp_cheats or aisp_cheats_k4";
    EXPECT_EQ(found->second, row.code) << row.fixture << " must be tagged cheat:" << row.code;
  }
}

TEST_F(validity_matrix, has_a_caught_row_for_every_fixture_tag) {
  const auto listing = aisp::cheat_testing::list_fixtures();
  ASSERT_TRUE(listing.error.empty()) << listing.error;
  std::map<std::string, std::string> caught_by;  // code -> fixture of its caught row
  for (const auto& row : rows_) {
    if (row.status == "caught") caught_by[row.code] = row.fixture;
  }
  for (const auto& f : listing.fixtures) {
    ASSERT_FALSE(f.code.empty()) << f.target << " carries no cheat:<code> tag";
    const auto found = caught_by.find(f.code);
    ASSERT_NE(found, caught_by.end()) << f.target << " plants " << f.code << ", whose row is not `caught`";
    // Its row names it, or (a second mechanism for the same row) its protection text does.
    const bool named = found->second == f.target;
    bool in_protection = false;
    for (const auto& row : rows_) in_protection = in_protection || (row.code == f.code && row.protection.find(f.target) != std::string::npos);
    EXPECT_TRUE(named || in_protection) << "the " << f.code << " row names neither " << f.target << " nor its mechanism";
  }
}

TEST_F(validity_matrix, accounts_for_every_gpu_fixture) {
  auto listing = aisp::cheat_testing::list_fixtures("cheats_gpu");
  ASSERT_TRUE(listing.error.empty()) << listing.error;
  EXPECT_GE(listing.fixtures.size(), 4u);
  // The multi-GPU fixtures (Note [ranks]) are accounted for the same way.
  const auto multi_gpu = aisp::cheat_testing::list_fixtures("cheats_multi_gpu");
  ASSERT_TRUE(multi_gpu.error.empty()) << multi_gpu.error;
  EXPECT_GE(multi_gpu.fixtures.size(), 4u);
  listing.fixtures.insert(listing.fixtures.end(), multi_gpu.fixtures.begin(), multi_gpu.fixtures.end());
  for (const auto& f : listing.fixtures) {
    bool accounted = false;
    for (const auto& row : rows_) {
      if (row.code != f.code) continue;
      // Its own `caught (gpu)` row, or named in the protection of its caught row (a second
      // mechanism of the same row).
      accounted = (row.status == "caught (gpu)" && row.fixture == f.target) ||
                  (row.status.starts_with("caught") && row.protection.find(f.target) != std::string::npos);
    }
    EXPECT_TRUE(accounted) << f.target << " (cheat:" << f.code << ") is not accounted for in docs/validity.md";
  }
}

}  // namespace
