#include "support/readable_error.hpp"

#include <regex>

namespace aisp {

std::string without_source_locations(std::string_view what) {
  static const std::regex location(R"((?:[^\s:]*/)?[\w.+-]+\.(?:cpp|hpp|cu|cuh|h|cc):\d+: )");
  // The failed expression in brackets, where a message ends (at ";" or the end of the text).
  static const std::regex expression(R"( \[[^\[\]]*\](?=;|$))");
  // A message relayed from another process (the pair host) lost its location but kept its
  // expression ("... [why == nullptr]", a user's walkthrough, 2026-12-04): one that reads as code
  // (an operator, a call, a bare name, true or false) goes too; "[0.77, 0.91]" is not code.
  static const std::regex code(R"( \[(false|true|[A-Za-z_][\w.]*|[^\[\]]*(==|!=|<=|>=|&&|\|\||::|->|nullptr|\(\))[^\[\]]*)\](?=;|$))");
  // Nested failures end in one expression each ("... [false] [false]"): off from the end, one at a time.
  const auto drop_trailing = [](std::string text, const std::regex& pattern) {
    for (std::string shorter; (shorter = std::regex_replace(text, pattern, "")) != text;) text = shorter;
    return text;
  };
  std::string text(what);
  if (!std::regex_search(text, location)) return drop_trailing(text, code);
  text = std::regex_replace(text, location, "");
  text = drop_trailing(text, expression);
  while (!text.empty() && (text.back() == ' ' || text.back() == ';')) text.pop_back();
  return text;
}

std::string without_json_prefix(std::string_view what) {
  static const std::regex tag(R"(^\[json\.exception\.[\w.]+\] )");
  return std::regex_replace(std::string(what), tag, "");
}

}  // namespace aisp
