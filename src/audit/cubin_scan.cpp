#include "audit/cubin_scan.hpp"

#include <elf.h>

#include <cstring>
#include <string_view>

namespace aisp {
namespace {

class elf_view {
 public:
  elf_view(const void* image, std::size_t size) : bytes_(static_cast<const unsigned char*>(image)), size_(size) {}

  [[nodiscard]] bool valid() const {
    if (bytes_ == nullptr || size_ < sizeof(Elf64_Ehdr)) return false;
    const auto* h = header();
    return std::memcmp(h->e_ident, ELFMAG, SELFMAG) == 0 && h->e_ident[EI_CLASS] == ELFCLASS64 &&
           h->e_shentsize == sizeof(Elf64_Shdr) && fits(h->e_shoff, std::size_t{h->e_shnum} * sizeof(Elf64_Shdr));
  }
  [[nodiscard]] const Elf64_Ehdr* header() const { return reinterpret_cast<const Elf64_Ehdr*>(bytes_); }
  [[nodiscard]] std::size_t section_count() const { return header()->e_shnum; }
  [[nodiscard]] const Elf64_Shdr* section(std::size_t index) const {
    if (index >= section_count()) return nullptr;
    return reinterpret_cast<const Elf64_Shdr*>(bytes_ + header()->e_shoff) + index;
  }
  // A NUL-terminated string inside section `strings`, or "" when out of bounds.
  [[nodiscard]] std::string_view string_at(std::size_t strings, std::size_t offset) const {
    const auto* s = section(strings);
    if (s == nullptr || offset >= s->sh_size || !fits(s->sh_offset, s->sh_size)) return {};
    const char* begin = reinterpret_cast<const char*>(bytes_ + s->sh_offset + offset);
    const std::size_t limit = s->sh_size - offset;
    return {begin, strnlen(begin, limit)};
  }
  [[nodiscard]] std::string_view section_name(const Elf64_Shdr& s) const { return string_at(header()->e_shstrndx, s.sh_name); }
  template <class Entry>
  [[nodiscard]] const Entry* entries(const Elf64_Shdr& s, std::size_t& count) const {
    count = 0;
    if (s.sh_entsize != sizeof(Entry) || !fits(s.sh_offset, s.sh_size)) return nullptr;
    count = s.sh_size / sizeof(Entry);
    return reinterpret_cast<const Entry*>(bytes_ + s.sh_offset);
  }

 private:
  [[nodiscard]] bool fits(std::size_t offset, std::size_t length) const { return offset <= size_ && length <= size_ - offset; }
  const unsigned char* bytes_;
  std::size_t size_;
};

// The device runtime's launch entry points (CDP2: __cudaCDP2LaunchDeviceV2; older: cudaLaunchDevice*).
bool is_device_launch(std::string_view symbol) { return symbol.find("LaunchDevice") != std::string_view::npos; }

template <class Relocation>
bool references_device_launch(const elf_view& elf, const Elf64_Shdr& relocations) {
  const auto* symbols_section = elf.section(relocations.sh_link);
  if (symbols_section == nullptr) return false;
  std::size_t symbol_count = 0;
  const auto* symbols = elf.entries<Elf64_Sym>(*symbols_section, symbol_count);
  std::size_t count = 0;
  const auto* entries = elf.entries<Relocation>(relocations, count);
  for (std::size_t i = 0; i < count; ++i) {
    const auto index = ELF64_R_SYM(entries[i].r_info);
    if (index >= symbol_count) continue;
    if (is_device_launch(elf.string_at(symbols_section->sh_link, symbols[index].st_name))) return true;
  }
  return false;
}

}  // namespace

std::set<std::string> kernels_launching_children(const void* image, std::size_t size) {
  std::set<std::string> launchers;
  const elf_view elf(image, size);
  if (!elf.valid()) return launchers;
  for (std::size_t i = 0; i < elf.section_count(); ++i) {
    const auto& s = *elf.section(i);
    if (s.sh_type != SHT_RELA && s.sh_type != SHT_REL) continue;
    // ".rela.text.<kernel>" holds the relocations of that kernel's code.
    std::string_view name = elf.section_name(s);
    const std::string_view prefix = s.sh_type == SHT_RELA ? ".rela.text." : ".rel.text.";
    if (!name.starts_with(prefix)) continue;
    name.remove_prefix(prefix.size());
    const bool launches = s.sh_type == SHT_RELA ? references_device_launch<Elf64_Rela>(elf, s)
                                                : references_device_launch<Elf64_Rel>(elf, s);
    if (launches && !is_device_launch(name)) launchers.emplace(name);
  }
  return launchers;
}

}  // namespace aisp
