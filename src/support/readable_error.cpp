#include "support/readable_error.hpp"

#include <regex>

namespace aisp {

std::string without_source_locations(std::string_view what) {
  static const std::regex location(R"((?:[^\s:]*/)?[\w.+-]+\.(?:cpp|hpp|cu|cuh|h|cc):\d+: )");
  // The failed expression in brackets, where a message ends (at ";" or the end of the text).
  static const std::regex expression(R"( \[[^\[\]]*\](?=;|$))");
  std::string text(what);
  if (!std::regex_search(text, location)) return text;
  text = std::regex_replace(text, location, "");
  text = std::regex_replace(text, expression, "");
  while (!text.empty() && (text.back() == ' ' || text.back() == ';')) text.pop_back();
  return text;
}

std::string without_json_prefix(std::string_view what) {
  static const std::regex tag(R"(^\[json\.exception\.[\w.]+\] )");
  return std::regex_replace(std::string(what), tag, "");
}

}  // namespace aisp
