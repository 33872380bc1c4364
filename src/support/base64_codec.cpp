#include "support/base64_codec.hpp"

#include <array>
#include <stdexcept>

namespace aisp {
namespace {

constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int, 256> decoding_table() {
  std::array<int, 256> table{};
  for (auto& entry : table) entry = -1;
  for (std::size_t i = 0; i < alphabet.size(); ++i) table[static_cast<unsigned char>(alphabet[i])] = static_cast<int>(i);
  return table;
}

}  // namespace

std::string base64_encode(const void* data, std::size_t bytes) {
  const auto* in = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((bytes + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes; i += 3) {
    const std::size_t left = bytes - i;
    const unsigned word = (unsigned{in[i]} << 16) | (left > 1 ? unsigned{in[i + 1]} << 8 : 0u) | (left > 2 ? unsigned{in[i + 2]} : 0u);
    out += alphabet[(word >> 18) & 63];
    out += alphabet[(word >> 12) & 63];
    out += left > 1 ? alphabet[(word >> 6) & 63] : '=';
    out += left > 2 ? alphabet[word & 63] : '=';
  }
  return out;
}

std::vector<unsigned char> base64_decode(std::string_view text) {
  static constexpr auto table = decoding_table();
  if (text.size() % 4 != 0) throw std::invalid_argument("base64: the length is not a multiple of 4");
  std::vector<unsigned char> out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    unsigned word = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const int value = k >= 4 - static_cast<std::size_t>(pad) ? 0 : table[static_cast<unsigned char>(text[i + k])];
      if (value < 0) throw std::invalid_argument("base64: a character outside the alphabet");
      word = (word << 6) | static_cast<unsigned>(value);
    }
    out.push_back(static_cast<unsigned char>(word >> 16));
    if (pad < 2) out.push_back(static_cast<unsigned char>((word >> 8) & 255));
    if (pad < 1) out.push_back(static_cast<unsigned char>(word & 255));
  }
  return out;
}

}  // namespace aisp
