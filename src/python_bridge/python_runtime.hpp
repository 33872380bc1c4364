// The embedded interpreter of the Python bridge (Note [python bridge] in python_pairs.cpp): the
// libpython of the user's interpreter, opened at run time, so one bridge serves any Python 3.
#pragma once

#include <string>

namespace aisp::python {

// Opens $AISP_PYTHON_LIBRARY, starts the interpreter with $AISP_PYTHON_HOME and
// $AISP_PYTHON_PATH, and imports aisp._bridge. Returns "" or why it could not, in one line.
[[nodiscard]] std::string start();

// Calls aisp._bridge.<function> with the arguments a Py_BuildValue tuple format, "(is)", builds, holding
// the GIL, and returns its string. The bridge's functions never raise: an error comes back as
// "error: ..." (one line), which this turns into a std::runtime_error.
std::string call(const char* function, const char* format, ...);

}  // namespace aisp::python
