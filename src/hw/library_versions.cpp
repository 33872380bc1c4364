#include "hw/library_versions.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "aisp/library_loading.hpp"

namespace aisp {
namespace {

// Library status codes (cublasStatus_t, ncclResult_t, CUptiResult) are C enums: int in the ABI,
// and 0 means success in all three.
constexpr int library_success = 0;
// libraryPropertyType (library_types.h): MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL.
constexpr std::array<int, 3> library_property_major_minor_patch = {0, 1, 2};

template <class Function>
Function symbol(void* library, const char* name) {
  return reinterpret_cast<Function>(dlsym(library, name));
}

// Each reader returns the decoded version, or nullopt with `why` set.
using version_reader = std::optional<std::string> (*)(void* library, std::string& why);

std::optional<std::string> read_cublas(void* library, std::string& why) {
  // Not cublasGetVersion_v2: it needs a handle, and a handle needs a CUDA context.
  const auto get_property = symbol<int (*)(int, int*)>(library, "cublasGetProperty");
  if (get_property == nullptr) {
    why = "cublasGetProperty missing";
    return std::nullopt;
  }
  std::array<int, 3> parts{};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (const int status = get_property(library_property_major_minor_patch[i], &parts[i]); status != library_success) {
      why = fmt::format("cublasGetProperty returned {}", status);
      return std::nullopt;
    }
  }
  return fmt::format("{}.{}.{}", parts[0], parts[1], parts[2]);
}

std::optional<std::string> read_cublas_lt(void* library, std::string& why) {
  const auto get_version = symbol<std::size_t (*)()>(library, "cublasLtGetVersion");
  if (get_version == nullptr) {
    why = "cublasLtGetVersion missing";
    return std::nullopt;
  }
  return decode_tens_version(get_version());
}

std::optional<std::string> read_cudnn(void* library, std::string& why) {
  const auto get_version = symbol<std::size_t (*)()>(library, "cudnnGetVersion");
  if (get_version == nullptr) {
    why = "cudnnGetVersion missing";
    return std::nullopt;
  }
  return decode_cudnn_version(get_version());
}

std::optional<std::string> read_nccl(void* library, std::string& why) {
  const auto get_version = symbol<int (*)(int*)>(library, "ncclGetVersion");
  if (get_version == nullptr) {
    why = "ncclGetVersion missing";
    return std::nullopt;
  }
  int code = 0;
  if (const int status = get_version(&code); status != library_success || code < 0) {
    why = fmt::format("ncclGetVersion returned {} (version {})", status, code);
    return std::nullopt;
  }
  return decode_nccl_version(static_cast<std::size_t>(code));
}

std::optional<std::string> read_cupti(void* library, std::string& why) {
  // The CUPTI API version (CUPTI_API_VERSION, e.g. 130001), not a release number: raw.
  const auto get_version = symbol<int (*)(std::uint32_t*)>(library, "cuptiGetVersion");
  if (get_version == nullptr) {
    why = "cuptiGetVersion missing";
    return std::nullopt;
  }
  std::uint32_t api_version = 0;
  if (const int status = get_version(&api_version); status != library_success) {
    why = fmt::format("cuptiGetVersion returned {}", status);
    return std::nullopt;
  }
  return std::to_string(api_version);
}

struct library_probe {
  const char* key;    // its member in the json
  const char* label;  // how render_library_versions names it
  std::array<const char*, 3> sonames;  // newest first; nullptr ends a shorter list
  version_reader read_version;
};

constexpr std::array<library_probe, 5> library_probes = {{
    {"cublas", "cuBLAS", {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, read_cublas},
    {"cublasLt", "cuBLASLt", {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}, read_cublas_lt},
    {"cudnn", "cuDNN", {"libcudnn.so.9", "libcudnn.so", nullptr}, read_cudnn},
    {"nccl", "NCCL", {"libnccl.so.2", "libnccl.so", nullptr}, read_nccl},
    {"cupti", "CUPTI api", {"libcupti.so.13", "libcupti.so", nullptr}, read_cupti},
}};

// dlclose on every path out of probe_library, once the version string is copied out.
struct loaded_library {
  void* handle = nullptr;
  loaded_library() = default;
  loaded_library(const loaded_library&) = delete;
  loaded_library& operator=(const loaded_library&) = delete;
  ~loaded_library() {
    if (handle != nullptr) dlclose(handle);
  }
};

std::vector<std::string> candidate_names(const library_probe& probe) {
  std::vector<std::string> names;
  for (const char* soname : probe.sonames) {
    if (soname == nullptr) break;
    add_library_candidates(names, soname);
  }
  return names;
}

const library_probe* find_probe(std::string_view key) {
  for (const auto& probe : library_probes) {
    if (key == probe.key) return &probe;
  }
  return nullptr;
}

nlohmann::json probe_library(const library_probe& probe, const std::vector<std::string>& candidates) {
  if (candidates.empty()) return {{"absent", "no candidate library names"}};
  const opened_library opened = open_first_library(candidates, RTLD_LAZY);
  if (opened.handle == nullptr) {
    std::string tried;
    for (const auto& name : candidates) tried += (tried.empty() ? "" : ", ") + name;
    return {{"absent", fmt::format("not loadable as {} ({})", tried, opened.first_error)}};
  }
  loaded_library library;
  library.handle = opened.handle;
  const std::string& loaded_name = opened.name;
  std::string why;
  const std::optional<std::string> version = probe.read_version(library.handle, why);
  if (!version) return {{"absent", on_one_line(fmt::format("{} loaded but {}", loaded_name, why))}};
  return {{"version", *version}, {"library", loaded_name}};
}

}  // namespace

std::string decode_tens_version(std::size_t code) {
  return fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
}

std::string decode_thousands_version(std::size_t code) {
  return fmt::format("{}.{}.{}", code / 1000, (code % 1000) / 100, code % 100);
}

std::string decode_cudnn_version(std::size_t code) {
  return code >= 90000 ? decode_tens_version(code) : decode_thousands_version(code);
}

std::string decode_nccl_version(std::size_t code) {
  return code >= 20900 ? decode_tens_version(code) : decode_thousands_version(code);
}

nlohmann::json read_library_version(std::string_view key, const std::vector<std::string>& candidates) {
  try {
    const library_probe* probe = find_probe(key);
    if (probe == nullptr) return {{"absent", fmt::format("no version getter known for \"{}\"", key)}};
    return probe_library(*probe, candidates);
  } catch (const std::exception& error) {
    return {{"absent", on_one_line(fmt::format("probe failed: {}", error.what()))}};
  } catch (...) {
    return {{"absent", "probe failed with a non-standard exception"}};
  }
}

nlohmann::json read_library_versions() {
  nlohmann::json versions = nlohmann::json::object();
  for (const auto& probe : library_probes) versions[probe.key] = read_library_version(probe.key, candidate_names(probe));
  return versions;
}

std::string render_library_versions(const nlohmann::json& versions) {
  std::string summary;
  std::string absences;
  for (const auto& probe : library_probes) {
    const auto entry = versions.find(probe.key);
    std::string shown = "absent";
    if (entry != versions.end() && entry->contains("version")) {
      shown = (*entry)["version"].get<std::string>();
    } else {
      const std::string why = entry != versions.end() && entry->contains("absent")
                                  ? (*entry)["absent"].get<std::string>()
                                  : std::string("not probed");
      absences += fmt::format("  {} absent: {}\n", probe.label, why);
    }
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", probe.label, shown);
  }
  return "libraries: " + summary + "\n" + absences;
}

}  // namespace aisp
