#include "support/shell_quote.hpp"

namespace aisp {

std::string shell_quoted(std::string_view text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string shell_word(std::string_view text) {
  constexpr std::string_view plain_characters =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=+,@%-";
  const bool plain = !text.empty() && text.find_first_not_of(plain_characters) == std::string_view::npos;
  return plain ? std::string(text) : shell_quoted(text);
}

}  // namespace aisp
