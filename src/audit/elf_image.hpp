// An ELF file read whole, for the build audits (audit/build_flags.cpp, audit/unoptimized_code.cpp):
// its sections by name and the bytes of each, bounds-checked, so a truncated or foreign file reads
// as having no sections rather than crashing the judge.
#pragma once

#include <elf.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace aisp {

// A symbol of a symbol table, its name pointing into the image.
struct elf_symbol {
  std::string_view name;
  Elf64_Sym entry{};
};

class elf_image {
 public:
  // Empty (no sections) when the file is unreadable or not a 64-bit ELF file.
  explicit elf_image(const std::string& path);

  [[nodiscard]] std::uint16_t machine() const { return valid_ ? header_.e_machine : std::uint16_t{EM_NONE}; }
  // A shared object or PIE executable, whose symbols' values are offsets from where it is loaded.
  [[nodiscard]] bool is_position_independent() const { return header_.e_type == ET_DYN; }
  [[nodiscard]] std::optional<Elf64_Shdr> section_named(std::string_view name) const;
  [[nodiscard]] std::optional<Elf64_Shdr> section_at(std::size_t index) const;
  // A section's bytes; empty where the section runs past the file (or occupies none, as .bss).
  [[nodiscard]] std::span<const unsigned char> bytes_of(const Elf64_Shdr& section) const;
  // A NUL-terminated string at `offset` in a string table section; "" where out of bounds.
  [[nodiscard]] std::string_view string_at(const Elf64_Shdr& table, std::size_t offset) const;
  // The symbols of the table named `table` (".symtab", ".dynsym"), with their names; empty where
  // there is none.
  [[nodiscard]] std::vector<elf_symbol> symbols_in(std::string_view table) const;

 private:
  std::vector<unsigned char> image_;
  Elf64_Ehdr header_{};
  bool valid_ = false;
};

}  // namespace aisp
