// The per-cubin SASS dump (Note [sass cache]), run against a stand-in for cuobjdump: a shell script
// that extracts two device ELFs and a non-ELF file, and lists one kernel named after each file it
// dumps. Where the real cuobjdump is installed, it also checks against the whole-binary dump.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "audit/math_unit_evidence.hpp"
#include "audit/sass_dump.hpp"

namespace {

class fake_cuobjdump : public ::testing::Test {
 protected:
  // A stand-in whose -sass runs `on_sass` first; it logs the directory it extracted into.
  std::string tool(const std::string& on_sass) {
    std::ofstream(tool_) << "#!/bin/sh\ncase \"$1\" in\n"
                         << "  -xelf) pwd > '" << log_.string() << "'\n"
                         << "         printf '\\177ELF' > app.1.sm_90a.cubin; printf '\\177ELF' > app.2.sm_100a\n"
                         << "         echo notes > notes.txt ;;\n"
                         << "  -sass) " << on_sass << "\n"
                         << "         echo \"Function : kernel_of_$(basename \"$2\")\" ;;\n"
                         << "esac\n";
    std::filesystem::permissions(tool_, std::filesystem::perms::owner_all);
    return tool_.string();
  }
  std::filesystem::path extraction_directory() const {
    std::ifstream in(log_);
    std::string line;
    std::getline(in, line);
    return line;
  }
  void TearDown() override {
    std::filesystem::remove(tool_);
    std::filesystem::remove(log_);
  }

 private:
  const std::string suffix_ = std::to_string(::getpid());
  const std::filesystem::path tool_ = std::filesystem::temp_directory_path() / ("aisp_fake_cuobjdump_" + suffix_);
  const std::filesystem::path log_ = std::filesystem::temp_directory_path() / ("aisp_fake_cuobjdump_log_" + suffix_);
};

TEST_F(fake_cuobjdump, every_extracted_device_elf_is_dumped_and_the_scratch_directory_is_removed) {
  const auto texts = aisp::sass_per_cubin(tool(":"), "/nonexistent/app");
  ASSERT_TRUE(texts.has_value());
  EXPECT_EQ(*texts, (std::vector<std::string>{"Function : kernel_of_app.1.sm_90a.cubin\n", "Function : kernel_of_app.2.sm_100a\n"}));
  const auto directory = extraction_directory();
  EXPECT_EQ(directory.parent_path(), std::filesystem::temp_directory_path()) << directory;
  EXPECT_FALSE(std::filesystem::exists(directory)) << directory;
}

TEST_F(fake_cuobjdump, one_failed_dump_discards_them_all_so_no_kernel_goes_missing_silently) {
  EXPECT_FALSE(aisp::sass_per_cubin(tool("case \"$2\" in *.2.*) exit 1 ;; esac"), "/nonexistent/app").has_value());
  EXPECT_FALSE(std::filesystem::exists(extraction_directory()));
}

TEST(sass_per_cubin, an_executable_without_device_elfs_has_no_per_cubin_listing) {
  EXPECT_FALSE(aisp::sass_per_cubin("/bin/true", "/nonexistent/app").has_value());
}

aisp::sass_math_table table_of(const std::string& text) {
  std::istringstream stream(text);
  return aisp::parse_sass_math_units(stream);
}

// The unit tests link the harness's kernels, so this binary holds device code of its own.
TEST(sass_per_cubin, lists_what_the_whole_binary_dump_lists) {
  const std::string tool = aisp::find_cuobjdump();
  if (tool.empty()) GTEST_SKIP() << "cuobjdump not found (PATH, /usr/local/cuda/bin)";
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const auto whole = aisp::run_command("'" + tool + "' -sass '" + self + "' 2>/dev/null");
  ASSERT_TRUE(whole.has_value());
  const auto expected = table_of(whole->text);
  ASSERT_FALSE(expected.empty());
  const auto texts = aisp::sass_per_cubin(tool, self);
  ASSERT_TRUE(texts.has_value());
  aisp::sass_math_table per_cubin;
  for (const auto& text : *texts) aisp::merge_sass_tables(per_cubin, table_of(text));
  EXPECT_EQ(per_cubin, expected);
}

}  // namespace
