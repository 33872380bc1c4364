// Bytes as base64 text (RFC 4648, with padding), for binary values inside JSON messages: the
// pair host's fp64 reference buffers (Note [untrusted pairs], runner/pair_host.cpp), exact to the bit.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace aisp {

[[nodiscard]] std::string base64_encode(const void* data, std::size_t bytes);
// Throws std::invalid_argument on text that is not base64.
[[nodiscard]] std::vector<unsigned char> base64_decode(std::string_view text);

}  // namespace aisp
