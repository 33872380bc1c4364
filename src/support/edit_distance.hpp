// The edits (insert, delete, replace a character) that make one word the other: for "did you
// mean" in the CLI's errors and in a pair file's unknown fields.
#pragma once

#include <cstddef>
#include <string_view>

namespace aisp {

[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace aisp
