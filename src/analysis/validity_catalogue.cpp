#include "analysis/validity_catalogue.hpp"

#include <algorithm>
#include <cctype>

#include "validity_matrix.hpp"  // generated: validity_matrix_markdown

namespace aisp {
namespace {

std::string trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return std::string(text);
}

std::string upper(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

bool is_code(const std::string& cell) {
  return cell.size() >= 2 && std::isupper(static_cast<unsigned char>(cell[0])) &&
         std::all_of(cell.begin() + 1, cell.end(), [](unsigned char c) { return std::isdigit(c); });
}

// The cells of "| a | b | c |" (a last cell without its closing bar counts too).
std::vector<std::string> cells_of(std::string_view line) {
  std::vector<std::string> cells;
  std::size_t from = 1;
  for (std::size_t bar = line.find('|', from); bar != std::string_view::npos; bar = line.find('|', from)) {
    cells.push_back(trimmed(line.substr(from, bar - from)));
    from = bar + 1;
  }
  if (auto tail = trimmed(line.substr(std::min(from, line.size()))); !tail.empty()) cells.push_back(std::move(tail));
  return cells;
}

}  // namespace

std::vector<validity_row> parse_validity_rows(std::string_view markdown, std::vector<std::string>* problems) {
  std::vector<validity_row> rows;
  int number = 0;
  for (std::size_t start = 0; start < markdown.size();) {
    std::size_t end = markdown.find('\n', start);
    if (end == std::string_view::npos) end = markdown.size();
    const std::string_view line = markdown.substr(start, end - start);
    start = end + 1;
    ++number;
    if (!line.starts_with('|')) continue;
    const auto cells = cells_of(line);
    if (cells.empty() || !is_code(cells[0])) continue;
    if (cells.size() != 5) {
      if (problems != nullptr)
        problems->push_back("line " + std::to_string(number) + " has " + std::to_string(cells.size()) + " cells, not 5");
      continue;
    }
    rows.push_back({cells[0], cells[1], cells[2], cells[3], cells[4], number});
  }
  return rows;
}

const std::vector<validity_row>& validity_catalogue() {
  static const std::vector<validity_row> rows = parse_validity_rows(validity_matrix_markdown);
  return rows;
}

std::vector<validity_row> explain_check(std::string_view query) {
  std::vector<validity_row> found;
  const std::string code = upper(trimmed(query));
  for (const auto& row : validity_catalogue()) {
    if (row.code == code) return {row};
  }
  std::string check(1, '`');  // built piece by piece: GCC 12's -Wrestrict misfires on "`" + string + "`"
  check += trimmed(query);
  check += '`';
  for (const auto& row : validity_catalogue()) {
    if (row.protection.find(check) != std::string::npos) found.push_back(row);
  }
  return found;
}

}  // namespace aisp
