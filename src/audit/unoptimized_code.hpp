// Note [unoptimized function] (audit/unoptimized_code.cpp): functions of a binary whose machine
// code starts as unoptimized (-O0) x86-64 code does, for build-symmetry (K4) in a plugin whose
// units were all built optimized.
#pragma once

#include <string>
#include <vector>

#include "audit/elf_image.hpp"

namespace aisp {

// The names (demangled) of the binary's functions whose code opens with a frame set up and an
// argument register stored into it; at most `most` of them, in the symbol table's order. Empty for a file
// that is unreadable, has no symbols, or is not x86-64.
[[nodiscard]] std::vector<std::string> unoptimized_functions(const elf_image& image, std::size_t most = 3);

}  // namespace aisp
