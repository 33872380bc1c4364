// The reduced-precision policies a worker's variant asked cuBLAS for (TF32 math mode, fast
// down-converting compute types), noted by the interposed entry points of math_mode_watch.cpp
// at any time, setup() included, and read by the session after setup and after each visit.
#pragma once

#include <string>
#include <vector>

namespace aisp {

void note_library_precision(std::string what);
// What was noted since the last call, each once, in order; then forgets it.
[[nodiscard]] std::vector<std::string> take_library_precision();

}  // namespace aisp
