// Kernel names as people read them: CUPTI reports the mangled symbol.
#pragma once

#include <string>
#include <string_view>

namespace aisp {

// "aisp::ch07::(anonymous namespace)::copy_kernel(float const*, float*, long)" for
// "_ZN4aisp4ch07...copy_kernelEPKfPfl"; a name that is not a mangled C++ symbol comes back as is.
[[nodiscard]] std::string readable_symbol(std::string_view mangled);

}  // namespace aisp
