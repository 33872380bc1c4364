// Note [lazy cuBLAS]: no binary of the project needs libcublas or libcublasLt to start; the first
// call opens the library and reaches the real function.
#include <gtest/gtest.h>

#include <cublasLt.h>
#include <elf.h>
#include <link.h>

#include <string>
#include <vector>

#include "support/cublas_library.hpp"

namespace {

// The shared libraries the executable names as needed (its DT_NEEDED entries).
std::vector<std::string> needed_by_the_executable() {
  std::vector<std::string> needed;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        auto& names = *static_cast<std::vector<std::string>*>(out);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
          const auto* dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
          const char* strings = nullptr;
          for (const auto* d = dynamic; d->d_tag != DT_NULL; ++d) {
            if (d->d_tag == DT_STRTAB) strings = reinterpret_cast<const char*>(d->d_un.d_ptr);
          }
          for (const auto* d = dynamic; strings != nullptr && d->d_tag != DT_NULL; ++d) {
            if (d->d_tag == DT_NEEDED) names.emplace_back(strings + d->d_un.d_val);
          }
        }
        return 1;  // the first object is the executable: stop there
      },
      &needed);
  return needed;
}

bool is_loaded(const std::string& fragment) {
  std::pair<std::string, bool> query{fragment, false};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        auto& q = *static_cast<std::pair<std::string, bool>*>(out);
        if (std::string(info->dlpi_name).find(q.first) != std::string::npos) q.second = true;
        return 0;
      },
      &query);
  return query.second;
}

TEST(lazy_cublas, the_executable_needs_neither_cublas_library_to_start) {
  const auto needed = needed_by_the_executable();
  ASSERT_FALSE(needed.empty()) << "the executable's dynamic section was not found";
  for (const auto& name : needed) EXPECT_EQ(name.find("cublas"), std::string::npos) << name;
}

TEST(lazy_cublas, the_first_call_opens_the_library_and_reaches_the_real_function) {
  EXPECT_STREQ(cublasLtGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
  EXPECT_TRUE(is_loaded("libcublasLt.so"));
  EXPECT_NE(aisp::cublas_entry(aisp::cublas_library::blas, "cublasCreate_v2"), nullptr);
  EXPECT_EQ(aisp::cublas_entry(aisp::cublas_library::blas, "cublasNoSuchEntry"), nullptr);
  EXPECT_NE(aisp::cublas_library_error().find("cublasNoSuchEntry"), std::string::npos);
}

}  // namespace
