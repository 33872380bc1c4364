// Host side of buffer_digest.hpp.
#include <cstring>

#include "harness/buffer_digest.hpp"
#include "support/seeded_fill.hpp"

namespace aisp {


std::uint64_t host_digest(const void* base, std::size_t bytes) { return hash_bytes(static_cast<const unsigned char*>(base), bytes); }

std::size_t host_count_subnormals(dtype type, const void* base, std::size_t count) {
  const auto fields = float_fields_of(type);
  if (fields.width_bits == 0) return 0;
  const std::size_t width = static_cast<std::size_t>(fields.width_bits / 8);
  const std::uint64_t mantissa_mask = (std::uint64_t{1} << fields.mantissa_bits) - 1;
  const std::uint64_t exponent_mask = ((std::uint64_t{1} << fields.exponent_bits) - 1) << fields.mantissa_bits;
  std::size_t found = 0;
  const auto* bytes = static_cast<const unsigned char*>(base);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, bytes + i * width, width);  // little-endian: the element's low bytes
    found += (bits & exponent_mask) == 0 && (bits & mantissa_mask) != 0;
  }
  return found;
}

}  // namespace aisp
