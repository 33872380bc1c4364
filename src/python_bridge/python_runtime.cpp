#include "python_bridge/python_runtime.hpp"

#include <dlfcn.h>

#include <cstdarg>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace aisp::python {
namespace {

api& the_api() {
  static api functions;
  return functions;
}

template <class F>
std::string find(void* library, const char* name, F& slot) {
  slot = reinterpret_cast<F>(dlsym(library, name));
  return slot != nullptr ? "" : std::string("libpython lacks ") + name;
}

std::string open_library(api& py) {
  const char* path = std::getenv("AISP_PYTHON_LIBRARY");
  if (path == nullptr || *path == '\0') return "AISP_PYTHON_LIBRARY is not set: run Python pairs with aisp bench run --python FILE";
  // RTLD_GLOBAL: extension modules (torch's) resolve the interpreter's symbols against it.
  void* library = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return std::string("cannot open ") + path + ": " + (why != nullptr ? why : "unknown error");
  }
  for (const auto& missing :
       {find(library, "Py_InitializeEx", py.initialize_ex), find(library, "PyEval_SaveThread", py.save_thread),
        find(library, "PyGILState_Ensure", py.gil_ensure), find(library, "PyGILState_Release", py.gil_release),
        find(library, "PyImport_ImportModule", py.import_module), find(library, "PyObject_GetAttrString", py.get_attr),
        find(library, "PyObject_CallObject", py.call_object), find(library, "Py_VaBuildValue", py.vbuild_value),
        find(library, "PyObject_Str", py.str), find(library, "PyTuple_Size", py.tuple_size),
        find(library, "PyTuple_GetItem", py.tuple_item), find(library, "PyUnicode_AsUTF8", py.as_utf8),
        find(library, "Py_DecRef", py.dec_ref), find(library, "PyErr_Print", py.print_error),
        find(library, "PyErr_Clear", py.clear_error)}) {
    if (!missing.empty()) return missing;
  }
  return "";
}

// Note [kept bridge functions]: the bridge's functions are taken once, as aisp._bridge is
// imported and before any pair file is: a pair file that assigns aisp._bridge.run (or a state
// reader, red team eight, 2026-12-04) replaces a name the harness no longer looks up.
std::map<std::string, object*>& kept_functions() {
  static std::map<std::string, object*> kept;
  return kept;
}

constexpr const char* bridge_functions[] = {"load", "bind", "setup", "run", "teardown", "work", "reference", "state_watch"};

object* bridge_module = nullptr;

void set_from(const char* python_name, const char* aisp_name) {
  if (const char* value = std::getenv(aisp_name); value != nullptr && *value != '\0') setenv(python_name, value, 1);
}

}  // namespace

std::string start() {
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [] {
    auto& py = the_api();
    error = open_library(py);
    if (!error.empty()) return;
    // The interpreter's own prefix and path (the CLI read them from it), not this binary's.
    set_from("PYTHONHOME", "AISP_PYTHON_HOME");
    set_from("PYTHONPATH", "AISP_PYTHON_PATH");
    py.initialize_ex(0);  // 0: leave the process's signal handlers to aisp
    bridge_module = py.import_module("aisp._bridge");
    for (const char* name : bridge_functions)
      if (bridge_module != nullptr) kept_functions()[name] = py.get_attr(bridge_module, name);  // a new reference, kept
    if (bridge_module == nullptr) {
      py.print_error();
      error = "cannot import aisp._bridge (the aisp Python package) with PYTHONPATH=" +
              std::string(std::getenv("PYTHONPATH") != nullptr ? std::getenv("PYTHONPATH") : "");
    }
    py.save_thread();  // release the GIL: every call takes it (the judge calls from several threads)
  });
  return error;
}

std::string call(const char* function, const char* format, ...) {
  auto& py = the_api();
  if (bridge_module == nullptr) throw std::runtime_error("python: the interpreter is not started");
  const auto kept = kept_functions().find(function);
  if (kept == kept_functions().end() || kept->second == nullptr)
    throw std::runtime_error(std::string("python: aisp._bridge has no function ") + function);
  const int gil = py.gil_ensure();
  std::string text;
  bool failed = false;
  object* fn = kept->second;
  va_list args;
  va_start(args, format);
  object* arguments = fn != nullptr ? py.vbuild_value(format, args) : nullptr;
  va_end(args);
  object* result = arguments != nullptr ? py.call_object(fn, arguments) : nullptr;
  const char* utf8 = result != nullptr ? py.as_utf8(result) : nullptr;
  if (utf8 == nullptr) {
    py.print_error();
    failed = true;
    text = std::string("python: aisp._bridge.") + function + " failed (see the traceback above)";
  } else {
    text = utf8;
  }
  for (object* held : {result, arguments}) {
    if (held != nullptr) py.dec_ref(held);
  }
  py.gil_release(gil);
  if (failed) throw std::runtime_error(text);
  if (text.rfind("error: ", 0) == 0) throw std::runtime_error("python: " + text.substr(7));
  return text;
}

const api& functions() { return the_api(); }

gil_held::gil_held() : state_(the_api().gil_ensure()) {}
gil_held::~gil_held() { the_api().gil_release(state_); }

}  // namespace aisp::python
