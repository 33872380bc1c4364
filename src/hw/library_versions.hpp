// Which CUDA math and communication libraries this machine would load, and their versions (E10):
// cuBLAS, cuBLASLt, cuDNN, NCCL and CUPTI. Each is dlopen'ed, asked through its own version
// getter and closed again, so none of them is a link dependency of aisp.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace aisp {

// {"cublas": {...}, "cublasLt": {...}, "cudnn": {...}, "nccl": {...}, "cupti": {...}}, each
// {"version": "13.1.0", "library": "libcublas.so.13"} or {"absent": "<why, one line>"}.
// Never throws: a library that does not load, or whose getter fails, is reported absent.
[[nodiscard]] nlohmann::json read_library_versions();

// One library, `key` being one of the five above, loaded from the first of `candidates` that
// dlopen accepts (names or paths, tried in order). Never throws. read_library_versions passes
// each soname bare, then under /usr/local/cuda/lib64/; tests pass names that cannot load.
[[nodiscard]] nlohmann::json read_library_version(std::string_view key, const std::vector<std::string>& candidates);

// "libraries: cuBLAS 13.1.0, ..., CUPTI api 130001", then one indented line per absent library.
[[nodiscard]] std::string render_library_versions(const nlohmann::json& versions);

// Version numbers as the libraries encode them (pure, so they are tested without the libraries).
// major*10000 + minor*100 + patch: cuBLASLt, cuDNN 9+, NCCL 2.9+.  130100 -> "13.1.0".
[[nodiscard]] std::string decode_tens_version(std::size_t code);
// major*1000 + minor*100 + patch: cuDNN 8 and older, NCCL up to 2.8.  8907 -> "8.9.7".
[[nodiscard]] std::string decode_thousands_version(std::size_t code);
// cuDNN switched encodings at 9.0.0 (90000); 8.9.7 was 8907.
[[nodiscard]] std::string decode_cudnn_version(std::size_t code);
// NCCL switched encodings at 2.9.0 (20900); 2.8.4 was 2804.
[[nodiscard]] std::string decode_nccl_version(std::size_t code);

}  // namespace aisp
