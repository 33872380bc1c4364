#include "audit/math_unit_evidence.hpp"

#include <cctype>
#include <filesystem>
#include <mutex>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/sass_dump.hpp"
#include "support/shell_quote.hpp"
#include "hw/ceilings.hpp"

namespace aisp {
namespace {

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// The unit of one SASS instruction line, if it is a tensor (MMA) instruction. Only an MMA's own
// type suffix counts: a conversion names fp8 too (F2FP.F16.E4M3.UNPACK_B widens e4m3 codes to
// fp16 on the CUDA cores), and a kernel that dequantizes fp8 before a bf16 GEMM runs no fp8 math.
std::optional<math_unit> unit_of_instruction(std::string_view line) {
  if (contains(line, "QGMMA")) return math_unit::fp8_tensor;
  if (!contains(line, "HMMA") && !contains(line, "HGMMA")) return std::nullopt;  // IMMA, DMMA: no unit of ours
  if (contains(line, ".E4M3") || contains(line, ".E5M2")) return math_unit::fp8_tensor;  // sm_89's mma.sync e4m3
  if (contains(line, ".BF16")) return math_unit::bf16_tensor;
  if (contains(line, ".TF32")) return math_unit::tf32_tensor;
  return math_unit::fp16_tensor;
}

// The opcode of a SASS instruction line ("FFMA.FTZ" of "/*0070*/  @P0 FFMA.FTZ R5, R2, 2, R3 ;"),
// empty for other lines.
std::string_view opcode_of(std::string_view line) {
  const auto comment = line.find("*/");
  if (comment == std::string_view::npos) return {};
  std::string_view rest = line.substr(comment + 2);
  const auto next_token = [&rest]() {
    const auto begin = rest.find_first_not_of(" \t");
    if (begin == std::string_view::npos) return std::string_view();
    const auto end = rest.find_first_of(" \t;", begin);
    const auto token = rest.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    return token;
  };
  auto token = next_token();
  if (token.starts_with("@")) token = next_token();  // a predicate
  return token;
}

// Note [sass cache]: `cuobjdump -sass` of the whole binary takes ~30 s on one core (112 kernels,
// one cubin per .cu file, H100 machine), so the cubins are extracted and dumped one per process, in
// parallel (audit/sass_dump.hpp), with that one dump as the fallback. The table is kept in the
// cache directory under the binary's path, size and time.
std::filesystem::path sass_cache_file(const std::string& executable) {
  std::error_code error;
  const auto size = std::filesystem::file_size(executable, error);
  const auto stamp = std::filesystem::last_write_time(executable, error).time_since_epoch().count();
  const auto key = std::hash<std::string>{}(std::filesystem::absolute(executable).string() + "|" + std::to_string(size) + "|" +
                                            std::to_string(stamp));
  return cache_directory() / "sass" / fmt::format("{:016x}.v2.json", key);  // v2: with the FP32 flush counts
}

std::optional<sass_math_table> read_cached_table(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  const auto doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
  sass_math_table table;
  for (const auto& [kernel, row] : doc.items()) {
    if (!row.is_object() || !row.contains("units")) return std::nullopt;
    auto& entry = table[kernel];
    for (const auto& unit : row["units"]) entry.units.insert(static_cast<math_unit>(unit.get<int>()));
    entry.fp32_ops = row.value("fp32_ops", 0);
    entry.flushed_ops = row.value("flushed_ops", 0);
  }
  return table;
}

void write_cached_table(const std::filesystem::path& file, const sass_math_table& table) {
  nlohmann::json doc = nlohmann::json::object();
  for (const auto& [kernel, entry] : table) {
    auto units = nlohmann::json::array();
    for (auto unit : entry.units) units.push_back(static_cast<int>(unit));
    doc[kernel] = {{"units", units}, {"fp32_ops", entry.fp32_ops}, {"flushed_ops", entry.flushed_ops}};
  }
  std::error_code error;
  std::filesystem::create_directories(file.parent_path(), error);
  std::ofstream out(file.string() + ".tmp");
  out << doc.dump();
  out.close();
  if (out) std::filesystem::rename(file.string() + ".tmp", file, error);
}

sass_math_table table_of_sass(const std::string& text) {
  std::istringstream stream(text);
  return parse_sass_math_units(stream);
}

// Every cubin's table merged; empty when the per-cubin dump failed or listed no kernels.
sass_math_table table_per_cubin(const std::string& tool, const std::string& executable) {
  sass_math_table table;
  for (const auto& text : sass_per_cubin(tool, executable).value_or(std::vector<std::string>{})) {
    merge_sass_tables(table, table_of_sass(text));
  }
  return table;
}

}  // namespace

sass_math_table parse_sass_math_units(std::istream& sass) {
  sass_math_table table;
  kernel_sass* current = nullptr;
  for (std::string line; std::getline(sass, line);) {
    if (const auto at = line.find("Function : "); at != std::string::npos) {
      std::string name = line.substr(at + 11);
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back())) != 0) name.pop_back();
      current = &table[name];
      continue;
    }
    if (current == nullptr) continue;
    if (const auto unit = unit_of_instruction(line)) current->units.insert(*unit);
    const auto opcode = opcode_of(line);
    const auto base = opcode.substr(0, opcode.find('.'));
    if (base == "FADD" || base == "FMUL" || base == "FFMA" || base == "FADD32I" || base == "FMUL32I" || base == "FFMA32I") {
      ++current->fp32_ops;
      if (contains(opcode, ".FTZ")) ++current->flushed_ops;
    }
  }
  return table;
}

void merge_sass_tables(sass_math_table& into, const sass_math_table& from) {
  for (const auto& [kernel, entry] : from) {
    auto& kept = into[kernel];
    kept.units.insert(entry.units.begin(), entry.units.end());
    kept.fp32_ops += entry.fp32_ops;
    kept.flushed_ops += entry.flushed_ops;
  }
}

const sass_math_table* sass_math_units_of(const std::string& executable, std::string& why) {
  static std::mutex mutex;
  static std::map<std::string, std::optional<sass_math_table>> tables;
  static std::map<std::string, std::string> reasons;
  const std::lock_guard lock(mutex);
  if (const auto found = tables.find(executable); found != tables.end()) {
    why = reasons[executable];
    return found->second ? &*found->second : nullptr;
  }
  auto& slot = tables[executable];
  const auto cached = sass_cache_file(executable);
  if ((slot = read_cached_table(cached))) return &*slot;
  const std::string tool = find_cuobjdump();
  if (tool.empty()) {
    why = reasons[executable] = "cuobjdump not found (PATH, /usr/local/cuda/bin)";
    return nullptr;
  }
  sass_math_table table = table_per_cubin(tool, executable);
  if (table.empty()) {  // Note [sass cache]: the fallback, today's one dump of the whole binary
    const auto whole = run_command(shell_quoted(tool) + " -sass " + shell_quoted(executable) + " 2>/dev/null");
    if (!whole) {
      why = reasons[executable] = "could not run " + tool;
      return nullptr;
    }
    table = table_of_sass(whole->text);
  }
  if (table.empty()) {
    why = reasons[executable] = tool + " -sass listed no kernels in " + executable;
    return nullptr;
  }
  slot = std::move(table);
  write_cached_table(cached, *slot);
  return &*slot;
}

std::optional<math_unit> library_kernel_math_unit(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (contains(lower, "tf32")) return math_unit::tf32_tensor;
  if (contains(lower, "e4m3") || contains(lower, "e5m2") || contains(lower, "fp8")) return math_unit::fp8_tensor;
  if (contains(lower, "bf16")) return math_unit::bf16_tensor;
  // cuBLAS's Hopper GEMMs: nvjet_sm90_<A><B><D>_..., the first letter the inputs' type.
  if (const auto at = lower.find("nvjet_"); at != std::string::npos) {
    std::string_view rest = std::string_view(lower).substr(at + 6);
    if (rest.starts_with("sm")) rest = rest.substr(std::min(rest.size(), rest.find('_') + 1));
    if (rest.size() > 3 && rest[3] == '_') {
      switch (rest[0]) {
        case 't': return math_unit::bf16_tensor;
        case 'h': return math_unit::fp16_tensor;
        case 'e':
        case 'q': return math_unit::fp8_tensor;
        case 's': return std::nullopt;  // fp32 inputs: SIMT or TF32, the name alone does not say
        default: return std::nullopt;
      }
    }
  }
  // cuDNN's runtime-generated attention kernels (cudnn_generated_fort_native_sdpa_sm90_flash_fprop_
  // wgmma_f16_...) say "f16" for fp16 and bf16 inputs alike (seen on bf16 inputs, H200, 2026-11-27):
  // the name does not tell the two apart.
  if (contains(lower, "cudnn_generated") && contains(lower, "sdpa")) return std::nullopt;
  if (contains(lower, "f16") || contains(lower, "hgemm") || contains(lower, "h1688") || contains(lower, "h16816")) {
    return math_unit::fp16_tensor;
  }
  if (contains(lower, "sgemm") || contains(lower, "gemv")) return math_unit::fp32_simt;
  return std::nullopt;
}

int math_unit_mantissa_bits(math_unit unit) {
  switch (unit) {
    case math_unit::fp32_simt: return 24;
    case math_unit::tf32_tensor: return 11;
    case math_unit::fp16_tensor: return 11;
    case math_unit::bf16_tensor: return 8;
    case math_unit::fp8_tensor: return 4;
  }
  return 24;
}

}  // namespace aisp
