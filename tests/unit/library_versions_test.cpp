#include <gtest/gtest.h>

#include "hw/library_versions.hpp"
#include "hw/system_info.hpp"

namespace {

const char* const library_keys[] = {"cublas", "cublasLt", "cudnn", "nccl", "cupti"};

TEST(decode_tens_version, splits_major_times_ten_thousand_plus_minor_times_hundred_plus_patch) {
  EXPECT_EQ(aisp::decode_tens_version(130100), "13.1.0");  // cuBLASLt 13.1.0
  EXPECT_EQ(aisp::decode_tens_version(120902), "12.9.2");
  EXPECT_EQ(aisp::decode_tens_version(91002), "9.10.2");   // a two-digit minor
  EXPECT_EQ(aisp::decode_tens_version(0), "0.0.0");
}

TEST(decode_thousands_version, splits_major_times_thousand_plus_minor_times_hundred_plus_patch) {
  EXPECT_EQ(aisp::decode_thousands_version(8907), "8.9.7");
  EXPECT_EQ(aisp::decode_thousands_version(2804), "2.8.4");
}

TEST(decode_cudnn_version, uses_the_ten_thousands_encoding_from_cudnn_9_and_the_thousands_one_before) {
  EXPECT_EQ(aisp::decode_cudnn_version(90000), "9.0.0");
  EXPECT_EQ(aisp::decode_cudnn_version(91401), "9.14.1");
  EXPECT_EQ(aisp::decode_cudnn_version(8907), "8.9.7");
}

TEST(decode_nccl_version, uses_the_ten_thousands_encoding_from_nccl_2_9_and_the_thousands_one_before) {
  EXPECT_EQ(aisp::decode_nccl_version(20900), "2.9.0");
  EXPECT_EQ(aisp::decode_nccl_version(22809), "2.28.9");
  EXPECT_EQ(aisp::decode_nccl_version(2804), "2.8.4");
}

TEST(read_library_versions, reports_every_library_either_with_a_version_or_with_why_it_is_absent) {
  nlohmann::json versions;
  ASSERT_NO_THROW(versions = aisp::read_library_versions());
  ASSERT_TRUE(versions.is_object());
  EXPECT_EQ(versions.size(), std::size(library_keys)) << versions.dump(1);
  for (const char* key : library_keys) {
    ASSERT_TRUE(versions.contains(key)) << key;
    const auto& entry = versions[key];
    const bool has_version = entry.contains("version");
    EXPECT_NE(has_version, entry.contains("absent")) << key << ": " << entry.dump();
    if (has_version) {
      EXPECT_TRUE(entry["version"].is_string()) << key;
      EXPECT_FALSE(entry["version"].get<std::string>().empty()) << key;
      EXPECT_TRUE(entry["library"].is_string()) << key;
    } else {
      ASSERT_TRUE(entry["absent"].is_string()) << key;
      EXPECT_EQ(entry["absent"].get<std::string>().find('\n'), std::string::npos) << key;
    }
  }
}

TEST(read_library_version, says_why_when_no_candidate_loads_naming_every_name_tried_on_one_line) {
  const auto entry = aisp::read_library_version("cudnn", {"libcudnn-that-does-not-exist.so.9", "/nonexistent/libcudnn.so"});
  ASSERT_FALSE(entry.contains("version")) << entry.dump();
  const std::string why = entry["absent"].get<std::string>();
  EXPECT_NE(why.find("libcudnn-that-does-not-exist.so.9"), std::string::npos) << why;
  EXPECT_NE(why.find("/nonexistent/libcudnn.so"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
}

TEST(read_library_version, reports_a_library_that_loads_but_lacks_the_getter_as_absent) {
  // libm loads everywhere glibc does, and exports no cuDNN symbols.
  const auto entry = aisp::read_library_version("cudnn", {"libm.so.6"});
  ASSERT_TRUE(entry.contains("absent")) << entry.dump();
  EXPECT_NE(entry["absent"].get<std::string>().find("libm.so.6 loaded but cudnnGetVersion missing"), std::string::npos)
      << entry.dump();
}

TEST(read_library_version, reports_an_unknown_library_or_an_empty_candidate_list_without_throwing) {
  EXPECT_TRUE(aisp::read_library_version("cufft", {"libm.so.6"}).contains("absent"));
  EXPECT_TRUE(aisp::read_library_version("nccl", {}).contains("absent"));
}

TEST(render_library_versions, names_each_library_in_order_and_says_why_an_absent_one_is_missing) {
  const nlohmann::json versions = {
      {"cublas", {{"version", "13.1.0"}, {"library", "libcublas.so.13"}}},
      {"cublasLt", {{"version", "13.1.0"}, {"library", "libcublasLt.so.13"}}},
      {"cudnn", {{"absent", "libcudnn.so.9: cannot open shared object file"}}},
      {"nccl", {{"version", "2.28.9"}, {"library", "libnccl.so.2"}}},
      {"cupti", {{"version", "130001"}, {"library", "libcupti.so.13"}}}};
  EXPECT_EQ(aisp::render_library_versions(versions),
            "libraries: cuBLAS 13.1.0, cuBLASLt 13.1.0, cuDNN absent, NCCL 2.28.9, CUPTI api 130001\n"
            "  cuDNN absent: libcudnn.so.9: cannot open shared object file\n");
}

TEST(system_info, carries_the_library_versions_into_its_json_and_its_text) {
  aisp::system_info info;
  info.library_versions = {{"cublas", {{"version", "13.1.0"}, {"library", "libcublas.so.13"}}}};
  EXPECT_EQ(aisp::to_json(info)["library_versions"]["cublas"]["version"], "13.1.0");
  EXPECT_NE(aisp::render_text(info).find("libraries: cuBLAS 13.1.0, cuBLASLt absent"), std::string::npos)
      << aisp::render_text(info);
}

}  // namespace
