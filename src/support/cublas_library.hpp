// Note [lazy cuBLAS]: cuBLAS and cuBLASLt are loaded on first use, not when a process starts.
// Linking them made every process map libcublasLt and relocate its 96 MiB of data: about 0.45 s
// and 210 MiB of memory before main() (measured here: a C program that only links libcublasLt
// takes 0.44 s to print a line, one that links nothing 0.00 s). Every worker, every CLI call and
// every test's child paid it, host pairs too, though only a few pairs call cuBLAS: the planted
// cheats suite spent 132 of its 327 s starting workers. The binaries no longer link either
// library; cublas_library.cpp defines each entry point the project calls, which opens the
// library once (dlopen, RTLD_GLOBAL) and forwards. A call the project starts making and that has
// no definition there fails to link: add its line.
#pragma once

#include <string>

namespace aisp {

enum class cublas_library : unsigned char { blas, blas_lt };

// The entry point `name` of the library, loading it on the first call; null where the library
// or the name is missing (cublas_library_error() says which).
[[nodiscard]] void* cublas_entry(cublas_library library, const char* name);

// Why the last failed cublas_entry() failed, in one line ("" if none did).
[[nodiscard]] std::string cublas_library_error();

}  // namespace aisp
