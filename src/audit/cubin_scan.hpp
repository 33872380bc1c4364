// Reads a cubin (the ELF image of a loaded CUDA module) for kernels that launch grids from the
// device: their relocations reference the device runtime's launch entry point. CUPTI cannot
// trace child grids on Hopper (CDP kernel records are "not compatible"), so this is how a
// kernel that hands its work to children is seen (C9).
#pragma once

#include <cstddef>
#include <set>
#include <string>

namespace aisp {

// Names of the kernels (mangled, as CUPTI reports them) whose code calls a device-side launch.
// An image that is not a 64-bit ELF yields an empty set.
[[nodiscard]] std::set<std::string> kernels_launching_children(const void* image, std::size_t size);

}  // namespace aisp
