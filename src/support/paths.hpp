// File names and programs: a target as a file name, and a tool found the way a shell finds it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace aisp {

// A target ("ch08:loop_unrolling", "labs/gemm:bf16_4096") as one file name: ':' and '/' become '_'.
[[nodiscard]] std::string file_safe(std::string text);

// The first executable `name` in $PATH's directories, then in `also_in` (e.g. /usr/local/cuda/bin,
// where the CUDA tools live when PATH leaves it out); "" when there is none.
[[nodiscard]] std::string find_program(std::string_view name, const std::vector<std::string>& also_in = {});

}  // namespace aisp
