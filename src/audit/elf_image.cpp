#include "audit/elf_image.hpp"

#include <cstring>
#include <fstream>
#include <iterator>

namespace aisp {

elf_image::elf_image(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  image_.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  if (image_.size() < sizeof(Elf64_Ehdr) || std::memcmp(image_.data(), ELFMAG, SELFMAG) != 0 || image_[EI_CLASS] != ELFCLASS64) return;
  std::memcpy(&header_, image_.data(), sizeof header_);
  valid_ = header_.e_shstrndx < header_.e_shnum;
}

std::optional<Elf64_Shdr> elf_image::section_at(std::size_t index) const {
  if (!valid_ || index >= header_.e_shnum) return std::nullopt;
  const std::size_t offset = header_.e_shoff + index * sizeof(Elf64_Shdr);
  if (offset + sizeof(Elf64_Shdr) > image_.size()) return std::nullopt;
  Elf64_Shdr section{};
  std::memcpy(&section, image_.data() + offset, sizeof section);
  return section;
}

std::optional<Elf64_Shdr> elf_image::section_named(std::string_view name) const {
  const auto names = section_at(header_.e_shstrndx);
  if (!names) return std::nullopt;
  for (std::size_t i = 0; i < header_.e_shnum; ++i) {
    const auto section = section_at(i);
    if (section && string_at(*names, section->sh_name) == name) return section;
  }
  return std::nullopt;
}

std::span<const unsigned char> elf_image::bytes_of(const Elf64_Shdr& section) const {
  if (section.sh_type == SHT_NOBITS || section.sh_offset > image_.size() || section.sh_size > image_.size() - section.sh_offset)
    return {};
  return {image_.data() + section.sh_offset, section.sh_size};
}

std::string_view elf_image::string_at(const Elf64_Shdr& table, std::size_t offset) const {
  const auto bytes = bytes_of(table);
  if (offset >= bytes.size()) return {};
  const auto* start = reinterpret_cast<const char*>(bytes.data() + offset);
  return {start, strnlen(start, bytes.size() - offset)};
}

std::vector<elf_symbol> elf_image::symbols_in(std::string_view table) const {
  std::vector<elf_symbol> symbols;
  const auto section = section_named(table);
  const auto names = section ? section_at(section->sh_link) : std::nullopt;
  if (!names) return symbols;
  const auto bytes = bytes_of(*section);
  for (std::size_t at = 0; at + sizeof(Elf64_Sym) <= bytes.size(); at += sizeof(Elf64_Sym)) {
    elf_symbol symbol;
    std::memcpy(&symbol.entry, bytes.data() + at, sizeof symbol.entry);
    symbol.name = string_at(*names, symbol.entry.st_name);
    symbols.push_back(symbol);
  }
  return symbols;
}

}  // namespace aisp
