// Build symmetry (K4): every translation unit of this binary records its compiler switches
// (-frecord-gcc-switches puts them in the .GCC.command.line section). A unit built with
// value-changing math flags, such as -ffast-math on one variant's file, makes the two variants
// of a pair incomparable unless declared.
#pragma once

#include <string>
#include <vector>

#include "audit/elf_image.hpp"

namespace aisp {

// The distinct command lines recorded in an ELF file's .GCC.command.line section; empty when
// the section is missing or the file is unreadable.
[[nodiscard]] std::vector<std::string> recorded_compile_switches(const elf_image& image);
[[nodiscard]] std::vector<std::string> recorded_compile_switches(const std::string& elf_path);

// A unit's record from scripts/record_math_flags ("none", or names joined by "__") in words:
// "" for "none", else e.g. "nvcc -use_fast_math, a math pragma or attribute in the source".
[[nodiscard]] std::string describe_unit_math_record(const std::string& record);

// The value-changing math flags found in those command lines (-ffast-math, -Ofast, ...).
[[nodiscard]] std::vector<std::string> unsafe_math_flags(const std::vector<std::string>& command_lines);

// Note [unoptimized unit]: the units whose recorded command line leaves them unoptimized (GCC's
// last -O option, -O0 where there is none; -Og, a debugging level, too), as "-O0" or "-Og" once
// each, when another unit of the same binary was built with optimization; empty otherwise.
[[nodiscard]] std::vector<std::string> unoptimized_units(const std::vector<std::string>& command_lines);

// Note [plugin build symmetry]: a plugin's units carry no record of their own unless its build
// ran scripts/record_math_flags, so its pairs are held to its whole binary's recorded switches:
// plugin_math_record_prefix then what build-symmetry says of them ("" when clean): the
// value-changing flags, an unoptimized unit's level beside optimized ones, and functions whose code
// opens as unoptimized code does (Note [unoptimized function]); or
// plugin_unrecorded when the binary recorded none (built without -frecord-gcc-switches).
inline constexpr const char* plugin_math_record_prefix = "plugin:";
inline constexpr const char* plugin_unrecorded = "plugin:unrecorded";
// What a plugin's binary says of its build, read once as it loads: its math record (above), and
// whether any of its units was unoptimized (its optimized flag is then false: one unit answers it).
struct plugin_build {
  std::string math_record;
  bool unoptimized_unit = false;
};
[[nodiscard]] plugin_build read_plugin_build(const std::string& plugin_path);

}  // namespace aisp
