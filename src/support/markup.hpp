// Text placed into HTML or SVG: the five characters markup gives a meaning to, escaped.
#pragma once

#include <string>
#include <string_view>

namespace aisp {

[[nodiscard]] std::string xml_escaped(std::string_view text);

}  // namespace aisp
