#include "audit/build_flags.hpp"

#include <algorithm>
#include <sstream>

#include "audit/unoptimized_code.hpp"

namespace aisp {

std::vector<std::string> recorded_compile_switches(const std::string& elf_path) { return recorded_compile_switches(elf_image(elf_path)); }

std::vector<std::string> recorded_compile_switches(const elf_image& image) {
  std::vector<std::string> lines;
  const auto section = image.section_named(".GCC.command.line");
  if (!section) return lines;
  std::string current;
  for (const unsigned char c : image.bytes_of(*section)) {
    if (c != '\0') {
      current += static_cast<char>(c);
    } else if (!current.empty()) {
      lines.push_back(current);
      current.clear();
    }
  }
  return lines;
}

std::vector<std::string> unsafe_math_flags(const std::vector<std::string>& command_lines) {
  static const std::vector<std::string> unsafe = {"-ffast-math", "-Ofast", "-funsafe-math-optimizations",
                                                  "-fassociative-math", "-freciprocal-math", "-ffinite-math-only"};
  std::vector<std::string> found;
  for (const auto& line : command_lines) {
    std::istringstream words(line);
    for (std::string word; words >> word;) {
      if (std::find(unsafe.begin(), unsafe.end(), word) != unsafe.end() &&
          std::find(found.begin(), found.end(), word) == found.end()) {
        found.push_back(word);
      }
    }
  }
  return found;
}

// Note [unoptimized unit]
// Both variants of a red team's plugin ran the same loop, the baseline's from a unit of its own
// built with -O0 (its binary recorded it; results said "optimized": true from the unit that
// defines aisp_plugin_built_optimized): 7.48x "faster" with every check passing (round eleven,
// 2026-12-05). A binary whose units were built at different levels is not measured as it ships,
// so an unoptimized unit beside optimized ones fails build-symmetry (K4) with the math flags.
// Optimization turned off for one function (an optimize attribute, a pragma) leaves no switch.
namespace {

std::string optimization_level(const std::string& command_line) {
  std::string level = "-O0";
  std::istringstream words(command_line);
  for (std::string word; words >> word;)
    if (word.starts_with("-O")) level = word == "-O" ? "-O1" : word;
  return level;
}

bool unoptimized_level(const std::string& level) { return level == "-O0" || level == "-Og"; }

}  // namespace

std::vector<std::string> unoptimized_units(const std::vector<std::string>& command_lines) {
  std::vector<std::string> low;
  bool optimized = false;
  for (const auto& line : command_lines) {
    const auto level = optimization_level(line);
    if (!unoptimized_level(level)) optimized = true;
    else if (std::find(low.begin(), low.end(), level) == low.end()) low.push_back(level);
  }
  return optimized ? low : std::vector<std::string>{};
}

plugin_build read_plugin_build(const std::string& plugin_path) {
  const elf_image image(plugin_path);
  const auto lines = recorded_compile_switches(image);
  if (lines.empty()) return {plugin_unrecorded, false};
  const bool unoptimized_unit = std::any_of(lines.begin(), lines.end(), [](const std::string& line) {
    return unoptimized_level(optimization_level(line));
  });
  std::string flags;
  for (const auto& flag : unsafe_math_flags(lines)) flags += (flags.empty() ? "" : " ") + flag;
  for (const auto& level : unoptimized_units(lines)) flags += (flags.empty() ? "" : " ") + level;
  std::string found = flags.empty() ? "" : "a unit of the plugin was built with " + flags;
  // Note [unoptimized function]: only in a plugin whose units were all optimized (a debug build's
  // every function opens so, and the optimized flag's warning says it).
  if (!unoptimized_unit) {
    const auto functions = unoptimized_functions(image);
    std::string named;
    for (const auto& function : functions) named += (named.empty() ? "" : ", ") + function;
    if (!named.empty())
      found += (found.empty() ? "" : "; ") + std::string("the plugin's ") + (functions.size() == 1 ? "function " : "functions ") + named +
               " opened as unoptimized (-O0) code does, arguments stored into a fresh frame, in a plugin built optimized: an "
               "optimize attribute or pragma";
  }
  return {plugin_math_record_prefix + found, unoptimized_unit};
}

std::string describe_unit_math_record(const std::string& record) {
  static const std::vector<std::pair<std::string, std::string>> words = {
      {"fast_math", "-ffast-math or -Ofast"},
      {"unsafe_math", "-funsafe-math-optimizations"},
      {"associative_math", "-fassociative-math"},
      {"reciprocal_math", "-freciprocal-math"},
      {"finite_math_only", "-ffinite-math-only"},
      {"use_fast_math", "nvcc -use_fast_math"},
      {"flush_to_zero", "nvcc --ftz=true"},
      {"approximate_division", "nvcc --prec-div=false"},
      {"approximate_sqrt", "nvcc --prec-sqrt=false"},
      {"math_pragma", "a math pragma or optimize attribute in the source"}};
  std::string described;
  std::size_t start = 0;
  while (record != "none" && start < record.size()) {
    const std::size_t end = std::min(record.find("__", start), record.size());
    const std::string name = record.substr(start, end - start);
    std::string text = name;
    for (const auto& [key, value] : words) {
      if (key == name) text = value;
    }
    described += (described.empty() ? "" : ", ") + text;
    start = end + 2;
  }
  return described;
}

}  // namespace aisp
