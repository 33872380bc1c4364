#include "audit/unoptimized_code.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>


namespace aisp {

// Note [unoptimized function]
// Both variants of a red team's plugin ran the same loop; the baseline's function carried
// __attribute__((optimize("O0"))), which no recorded switch shows: 7.49x "faster", every check
// passing (round eleven, 2026-12-05). Unoptimized code has a shape optimized code does not: GCC
// and Clang at -O0 set up a frame (push %rbp; mov %rsp,%rbp; perhaps sub $n,%rsp) and store every
// argument register into it before anything else (mov %rdi,-0x18(%rbp)). At -O1 and above
// arguments stay in registers; with -fno-omit-frame-pointer the frame comes with pushes of the
// registers the function keeps, never a store straight after it, and a variadic function's
// register save area is far from the frame (a 32-bit displacement, not matched). Only functions
// with arguments show it, and a variant's run() has one (its run_context).
namespace {

bool stores_an_argument(std::span<const unsigned char> code) {
  // mov r64/r32 of an argument register to disp8(%rbp): ModRM mod=01, rm=101; the register field
  // names rdi, rsi, rdx or rcx (REX.W or none), r8 or r9 (REX.WR); and movsd/movss %xmm0-7.
  const auto modrm_argument = [](unsigned char modrm) {
    const unsigned reg = (modrm >> 3) & 7;
    return (modrm & 0xC7) == 0x45 && (reg == 7 || reg == 6 || reg == 2 || reg == 1);
  };
  if (code.size() >= 3 && code[0] == 0x48 && code[1] == 0x89 && modrm_argument(code[2])) return true;
  if (code.size() >= 2 && code[0] == 0x89 && modrm_argument(code[1])) return true;
  if (code.size() >= 3 && code[0] == 0x4C && code[1] == 0x89 && (code[2] == 0x45 || code[2] == 0x4D)) return true;
  if (code.size() >= 4 && (code[0] == 0xF2 || code[0] == 0xF3) && code[1] == 0x0F && code[2] == 0x11 && (code[3] & 0xC7) == 0x45)
    return true;
  return false;
}

bool opens_as_unoptimized(std::span<const unsigned char> code) {
  constexpr unsigned char endbr64[] = {0xF3, 0x0F, 0x1E, 0xFA};
  constexpr unsigned char frame[] = {0x55, 0x48, 0x89, 0xE5};
  if (code.size() >= 4 && std::memcmp(code.data(), endbr64, 4) == 0) code = code.subspan(4);
  if (code.size() < 4 || std::memcmp(code.data(), frame, 4) != 0) return false;
  code = code.subspan(4);
  if (code.size() >= 4 && code[0] == 0x48 && code[1] == 0x83 && code[2] == 0xEC) code = code.subspan(4);       // sub $imm8,%rsp
  else if (code.size() >= 7 && code[0] == 0x48 && code[1] == 0x81 && code[2] == 0xEC) code = code.subspan(7);  // sub $imm32,%rsp
  return stores_an_argument(code);
}

// NVIDIA's static runtime libraries (libcudart_static.a, linked into every CUDA plugin) name their
// local functions libcudart_static_<40 hex digits>, and some of them open with a frame and stores.
bool vendor_static_library_symbol(std::string_view name) {
  if (!name.starts_with("lib") || name.size() < 40) return false;
  const auto marker = name.find("_static_");
  return marker != std::string_view::npos && name.size() - marker - 8 == 40 &&
         name.find_first_not_of("0123456789abcdef", marker + 8) == std::string_view::npos;
}

std::string demangled(std::string_view name) {
  const std::string mangled(name);
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> plain(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && plain ? std::string(plain.get()) : mangled;
}

}  // namespace

std::vector<std::string> unoptimized_functions(const elf_image& image, std::size_t most) {
  std::vector<std::string> found;
  if (image.machine() != EM_X86_64) return found;
  auto symbols = image.symbols_in(".symtab");
  if (symbols.empty()) symbols = image.symbols_in(".dynsym");
  for (const auto& [name, symbol] : symbols) {
    if (found.size() == most) break;
    if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_size < 8 || symbol.st_shndx == SHN_UNDEF || symbol.st_shndx >= SHN_LORESERVE ||
        vendor_static_library_symbol(name))
      continue;
    const auto section = image.section_at(symbol.st_shndx);
    if (!section || symbol.st_value < section->sh_addr) continue;
    const auto code = image.bytes_of(*section);
    const std::size_t offset = symbol.st_value - section->sh_addr;
    if (offset < code.size() && opens_as_unoptimized(code.subspan(offset, std::min<std::size_t>(symbol.st_size, code.size() - offset))))
      found.push_back(demangled(name));
  }
  return found;
}

}  // namespace aisp
