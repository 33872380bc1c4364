#include "audit/build_flags.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace aisp {

std::vector<std::string> recorded_compile_switches(const std::string& elf_path) {
  std::vector<std::string> lines;
  std::ifstream file(elf_path, std::ios::binary);
  const std::vector<char> image((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (image.size() < sizeof(Elf64_Ehdr) || std::memcmp(image.data(), ELFMAG, SELFMAG) != 0) return lines;
  Elf64_Ehdr header;
  std::memcpy(&header, image.data(), sizeof header);
  const auto section_at = [&](std::size_t index) {
    Elf64_Shdr section{};
    const std::size_t offset = header.e_shoff + index * sizeof(Elf64_Shdr);
    if (offset + sizeof section <= image.size()) std::memcpy(&section, image.data() + offset, sizeof section);
    return section;
  };
  if (header.e_shstrndx >= header.e_shnum) return lines;
  const Elf64_Shdr names = section_at(header.e_shstrndx);
  for (std::size_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr section = section_at(i);
    if (names.sh_offset + section.sh_name >= image.size()) continue;
    if (std::strcmp(image.data() + names.sh_offset + section.sh_name, ".GCC.command.line") != 0) continue;
    if (section.sh_offset + section.sh_size > image.size()) return lines;
    std::string current;
    for (std::size_t b = 0; b < section.sh_size; ++b) {
      const char c = image[section.sh_offset + b];
      if (c != '\0') {
        current += c;
      } else if (!current.empty()) {
        lines.push_back(current);
        current.clear();
      }
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

bool has_unoptimized_unit(const std::vector<std::string>& command_lines) {
  return std::any_of(command_lines.begin(), command_lines.end(),
                     [](const std::string& line) { return unoptimized_level(optimization_level(line)); });
}

std::string plugin_math_record(const std::string& plugin_path) {
  const auto lines = recorded_compile_switches(plugin_path);
  if (lines.empty()) return plugin_unrecorded;
  std::string found;
  for (const auto& flag : unsafe_math_flags(lines)) found += (found.empty() ? "" : " ") + flag;
  for (const auto& level : unoptimized_units(lines)) found += (found.empty() ? "" : " ") + level;
  return plugin_math_record_prefix + found;
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
