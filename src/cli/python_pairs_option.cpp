#include "cli/python_pairs_option.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "harness/plugin_loader.hpp"
#include "support/python_interpreter.hpp"
#include "support/shell_quote.hpp"

namespace aisp::cli {
namespace {

namespace fs = std::filesystem;

// What the embedded interpreter needs from the real one: its shared libpython, prefix and path.
constexpr const char* probe_script =
    "import json, os, sys, sysconfig\n"
    "names = [sysconfig.get_config_var(v) for v in ('INSTSONAME', 'LDLIBRARY')]\n"
    "dirs = [sysconfig.get_config_var('LIBDIR') or '', os.path.join(sys.base_prefix, 'lib')]\n"
    "found = [os.path.join(d, n) for n in names if n and n.endswith(tuple('.so' + s for s in ('', '.1', '.1.0'))) "
    "for d in dirs if os.path.isfile(os.path.join(d, n))]\n"
    "print(json.dumps({'library': found[0] if found else '', 'home': sys.base_prefix, "
    "'path': [p for p in sys.path if p], 'version': sys.version.split()[0]}))\n";

nlohmann::json probe(const std::string& python) {
  const std::string command = shell_quoted(python) + " -c " + shell_quoted(probe_script) + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  AISP_EXPECTS(pipe != nullptr, "--python: cannot run " + python);
  std::string output;
  char chunk[4096];
  while (const std::size_t got = std::fread(chunk, 1, sizeof chunk, pipe)) output.append(chunk, got);
  const int status = pclose(pipe);
  auto parsed = nlohmann::json::parse(output, nullptr, false);
  AISP_EXPECTS(status == 0 && parsed.is_object(),
               "--python: the interpreter " + python + " did not run (set AISP_PYTHON to a Python 3): " +
                   output.substr(0, output.find('\n')));
  return parsed;
}

std::string joined_path(const nlohmann::json& entries, const std::string& first) {
  std::string path = first;
  for (const auto& entry : entries) path.append(":").append(entry.get<std::string>());
  return path;
}

}  // namespace

std::string prepare_python_pairs(const std::string& pair_file) {
  std::error_code error;
  AISP_EXPECTS(!fs::is_directory(pair_file, error), "--python: " + pair_file + " is a folder; name a pair file in it");
  AISP_EXPECTS(fs::is_regular_file(pair_file, error), "--python: no pair file " + pair_file);
  // The build tree and an install keep the same layout beside bin/.
  const fs::path bridge = python_bridge_path();
  const fs::path package = bridge.parent_path().parent_path().parent_path() / "share" / "aisp" / "python";
  AISP_EXPECTS(fs::is_regular_file(bridge, error), "--python: the Python bridge " + bridge.string() + " is missing (build the aisp_python target)");
  AISP_EXPECTS(fs::is_regular_file(package / "aisp" / "__init__.py", error),
               "--python: the aisp Python package is missing from " + package.string());
  if (std::getenv("AISP_PYTHON_LIBRARY") == nullptr) {
    const std::string python = python_interpreter();
    const auto found = probe(python);
    const auto library = found.value("library", std::string());
    AISP_EXPECTS(!library.empty(), "--python: " + python + " (Python " + found.value("version", std::string("?")) +
                                       ") has no shared libpython to embed: install its libpython package or use an "
                                       "interpreter built with --enable-shared (AISP_PYTHON)");
    setenv("AISP_PYTHON_LIBRARY", library.c_str(), 1);
    setenv("AISP_PYTHON_HOME", found.at("home").get<std::string>().c_str(), 1);
    setenv("AISP_PYTHON_PATH", joined_path(found.at("path"), package.string()).c_str(), 1);
  }
  // Note [python allocator]: glibc's malloc adapts its mmap and trim thresholds to a process's
  // history, so whether an eager call's temporaries fault in fresh pages differed between two
  // workers of the same code: 1.7 ms in one, 3.8 ms (992 page faults a call) in its twin, a
  // 2.7x "speedup" that was 1.26x (2026-11-28, this machine). Fixed thresholds make every worker
  // alike; a user's own GLIBC_TUNABLES wins.
  setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824", 0);
  const char* earlier = std::getenv("AISP_PYTHON_PAIRS");
  const std::string file = fs::canonical(pair_file).string();
  std::string files = earlier != nullptr ? earlier : "";
  // The same file twice would register every pair of it twice, and the error named a target only.
  AISP_EXPECTS((":" + files + ":").find(":" + file + ":") == std::string::npos,
               "--python: " + pair_file + " is named twice; name each pair file once");
  files.append(files.empty() ? "" : ":").append(file);
  setenv("AISP_PYTHON_PAIRS", files.c_str(), 1);
  return bridge.string();
}

}  // namespace aisp::cli
