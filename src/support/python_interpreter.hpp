// The Python that --python embeds and that an executable pair's "{python}" runs.
#pragma once

#include <string>

namespace aisp {

// $AISP_PYTHON, else /usr/bin/python3 (Debian's PyTorch and numpy import there, not under a pyenv
// python3 first on PATH), else python3 on PATH.
[[nodiscard]] std::string python_interpreter();

}  // namespace aisp
