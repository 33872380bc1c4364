// The embedded interpreter of the Python bridge (Note [python bridge] in python_pairs.cpp): the
// libpython of the user's interpreter, opened at run time, so one bridge serves any Python 3.
#pragma once

#include <cstdarg>
#include <string>

namespace aisp::python {

// Opens $AISP_PYTHON_LIBRARY, starts the interpreter with $AISP_PYTHON_HOME and
// $AISP_PYTHON_PATH, imports aisp._bridge and keeps its functions (Note [kept bridge functions]).
// Returns "" or why it could not, in one line.
[[nodiscard]] std::string start();

// Calls aisp._bridge.<function> with the arguments a Py_BuildValue tuple format, "(is)", builds, holding
// the GIL, and returns its string. The bridge's functions never raise: an error comes back as
// "error: ..." (one line), which this turns into a std::runtime_error.
std::string call(const char* function, const char* format, ...);

// The few functions of CPython's stable ABI the bridge needs, found with dlsym: no Python
// headers at build time, and no link to one Python version.
struct object;
struct api {
  void (*initialize_ex)(int) = nullptr;
  void* (*save_thread)() = nullptr;
  int (*gil_ensure)() = nullptr;
  void (*gil_release)(int) = nullptr;
  object* (*import_module)(const char*) = nullptr;
  object* (*get_attr)(object*, const char*) = nullptr;
  object* (*call_object)(object*, object*) = nullptr;
  object* (*vbuild_value)(const char*, va_list) = nullptr;
  object* (*str)(object*) = nullptr;
  long (*tuple_size)(object*) = nullptr;
  object* (*tuple_item)(object*, long) = nullptr;  // borrowed
  const char* (*as_utf8)(object*) = nullptr;
  void (*dec_ref)(object*) = nullptr;
  void (*print_error)() = nullptr;
  void (*clear_error)() = nullptr;
};

// The functions above, once start() has succeeded.
const api& functions();

// Holds the GIL for its lifetime.
class gil_held {
 public:
  gil_held();
  ~gil_held();
  gil_held(const gil_held&) = delete;
  gil_held& operator=(const gil_held&) = delete;

 private:
  int state_;
};

}  // namespace aisp::python
