#include "serve/host_guard.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace aisp::serve {
namespace {

bool only(std::string_view text, bool (*allowed)(unsigned char)) {
  return std::all_of(text.begin(), text.end(), [allowed](char c) { return allowed(static_cast<unsigned char>(c)); });
}

bool is_digit(unsigned char c) { return std::isdigit(c) != 0; }
bool is_digit_or_dot(unsigned char c) { return std::isdigit(c) != 0 || c == '.'; }

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// "127.0.0.1:8321" -> "127.0.0.1", "[::1]:8321" -> "[::1]", "localhost" -> "localhost".
std::string without_port(std::string_view host) {
  const auto colon = host.rfind(':');
  const auto bracket = host.rfind(']');
  if (colon == std::string_view::npos || (bracket != std::string_view::npos && colon < bracket)) return std::string(host);
  const auto port = host.substr(colon + 1);
  if (port.empty() || !only(port, is_digit)) return std::string(host);
  return std::string(host.substr(0, colon));
}

}  // namespace

bool is_loopback_host(std::string_view bound_host) {
  const auto host = lower(bound_host);
  return host == "localhost" || host == "::1" || host == "[::1]" || host.starts_with("127.");
}

bool host_header_allowed(std::string_view host_header, std::string_view bound_host) {
  if (host_header.empty() || !is_loopback_host(bound_host)) return true;
  const auto name = lower(without_port(host_header));
  return name == "localhost" || name == "[::1]" || name == lower(bound_host) || (name.starts_with("127.") && only(name, is_digit_or_dot));
}

}  // namespace aisp::serve
