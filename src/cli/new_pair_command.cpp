// `aisp new pair GROUP:NAME`: a commented skeleton pair file (and a CMakeLists.txt for a plugin,
// when the folder has none) that builds and passes `bench verify` as written; its TODOs say where
// your baseline, your optimized variant and your reference go (docs/tutorial.md).
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "cli/commands.hpp"
#include "cli/python_pair_template.hpp"

namespace aisp::cli {
namespace {

// {target}, {name}, {group} are filled in; the rest is the file as written.
constexpr const char* host_template = R"(// {target}: TODO one line: what the pair computes.
// Baseline: TODO the first version a competent engineer writes.
// Optimized: TODO what changed, and why it is faster (the napkin math).
// Run: aisp bench verify --plugin lib{group}_pairs.so --targets {target}
//      aisp bench run    --plugin lib{group}_pairs.so --targets {target}
#include <cstdint>
#include <span>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"

namespace {group}_pairs {{
namespace {{

// TODO your baseline. The harness owns the buffers: read inputs and write outputs through ctx.
void {name}_baseline(aisp::run_context& ctx) {{
  const auto n = ctx.param("n");
  const double* x = ctx.as<const double>("x");
  double* y = ctx.as<double>("y");
  for (std::int64_t i = 0; i < n; ++i) y[i] = 2.0 * x[i];
}}

// TODO your optimized variant: the same result (within the tolerance), faster.
void {name}_optimized(aisp::run_context& ctx) {{
  const auto n = ctx.param("n");
  const double* x = ctx.as<const double>("x");
  double* y = ctx.as<double>("y");
  for (std::int64_t i = 0; i < n; ++i) y[i] = 2.0 * x[i];
}}

[[nodiscard]] std::int64_t elements(const aisp::workload& w) {{ return w.get("n"); }}

}}  // namespace
}}  // namespace {group}_pairs

AISP_REGISTER(aisp::pair("{target}")
                  .summary("TODO one line for `bench list-targets`")
                  .on(aisp::backend::host)  // TODO remove for a CUDA pair (and launch on ctx.stream())
                  // TODO sizes: the benchmark size is timed; validation and held-out sizes are
                  // checked against the reference. Keep odd sizes among them: they find tails.
                  .benchmark_size({{{{"n", std::int64_t{{1}} << 24}}}})
                  .validation_size({{{{"n", 1}}}})
                  .validation_size({{{{"n", 1001}}}})
                  .held_out_size({{{{"n", 65537}}}})
                  // TODO buffers: inputs are filled with fresh random values before every call.
                  .input("x", aisp::dtype::f64, {group}_pairs::elements)
                  .output("y", aisp::dtype::f64, {group}_pairs::elements)
                  // TODO the work one call does: bytes moved and FLOPs, for the speed of light.
                  .work([](const aisp::workload& w) {{
                    const double n = static_cast<double>(w.get("n"));
                    return aisp::work_amount{{.bytes = 16.0 * n, .flops = n}};
                  }})
                  // TODO the reference, in fp64 on the host: what the right answer is.
                  .reference([](aisp::reference_io& io) {{
                    const auto x = io.input("x");
                    const auto y = io.output("y");
                    for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2.0 * x[i];
                  }})
                  .add_variant("baseline", "TODO what it is", {group}_pairs::{name}_baseline)
                  .add_variant("optimized", "TODO what changed", {group}_pairs::{name}_optimized));
)";

constexpr const char* cmake_template = R"(# Your pairs as an aisp plugin (docs/tutorial.md):
#   cmake -S . -B build -DCMAKE_PREFIX_PATH=<aisp install prefix> && cmake --build build
#   aisp bench verify --plugin build/lib{group}_pairs.so --targets {group}
cmake_minimum_required(VERSION 3.25)
project({group}_pairs LANGUAGES CXX)  # add CUDA for .cu files
find_package(aisp REQUIRED)
aisp_add_benchmark({group}_pairs {name}.cpp)
)";

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  AISP_EXPECTS(out.good(), "could not write " + path.string());
}

// A --dir that names a file, or a folder that cannot be made, in one line (the filesystem's own
// error named neither the option nor what to do, a user's walkthrough, 2026-12-04).
void make_folder(const std::string& folder) {
  std::error_code error;
  AISP_EXPECTS(!std::filesystem::exists(folder, error) || std::filesystem::is_directory(folder, error),
               "--dir " + folder + " is a file, not a folder: name a folder (it is made if missing)");
  std::filesystem::create_directories(folder, error);
  AISP_EXPECTS(!error, "--dir " + folder + ": cannot make the folder (" + error.message() + ")");
}

int new_python_pair(const std::string& target, const std::string& name, const std::string& folder) {
  const auto file = std::filesystem::path(folder) / (name + ".py");
  AISP_EXPECTS(!std::filesystem::exists(file), file.string() + " exists already: nothing written");
  make_folder(folder);
  write_file(file, fmt::format(fmt::runtime(python_pair_template), fmt::arg("target", target), fmt::arg("name", name)));
  std::printf("wrote %s\nnext: fill the TODOs, then aisp bench verify --python %s\n", file.c_str(), file.c_str());
  return 0;
}

int new_pair(const std::string& target, const std::string& folder, bool python) {
  const std::regex form("([a-z][a-z0-9_]*):([a-z][a-z0-9_]*)");
  std::smatch parts;
  AISP_EXPECTS(std::regex_match(target, parts, form),
               "the target must read group:name in lower case, letters, digits and _, e.g. mine:fused_mlp; not '" + target + "'");
  const std::string group = parts[1];
  const std::string name = parts[2];
  if (python) return new_python_pair(target, name, folder);
  const auto file = std::filesystem::path(folder) / (name + ".cpp");
  AISP_EXPECTS(!std::filesystem::exists(file), file.string() + " exists already: nothing written");
  make_folder(folder);
  write_file(file, fmt::format(fmt::runtime(host_template), fmt::arg("target", target), fmt::arg("group", group), fmt::arg("name", name)));
  std::printf("wrote %s\n", file.c_str());
  const auto cmake = std::filesystem::path(folder) / "CMakeLists.txt";
  if (!std::filesystem::exists(cmake)) {
    write_file(cmake, fmt::format(fmt::runtime(cmake_template), fmt::arg("group", group), fmt::arg("name", name)));
    std::printf("wrote %s\n", cmake.c_str());
  } else {
    std::printf("%s exists: add %s.cpp to its aisp_add_benchmark()\n", cmake.c_str(), name.c_str());
  }
  std::printf("next: fill the TODOs, build it (docs/tutorial.md), then aisp bench verify --plugin lib%s_pairs.so --targets %s\n",
              group.c_str(), target.c_str());
  return 0;
}

}  // namespace

void add_new_command(CLI::App& app, outcome& result) {
  auto* group = app.add_subcommand("new", "Start something of your own from a commented skeleton.");
  group->require_subcommand(1);
  auto* pair_command = group->add_subcommand(
      "pair", "Write NAME.cpp (in --dir, default the current folder), a host pair that builds and passes\n"
              "`bench verify` as written, and a CMakeLists.txt for a plugin when that folder has none; or,\n"
              "with --python, NAME.py, a PyTorch pair file. Fill its TODOs with your code.\n"
              "Example: aisp new pair mine:fused_mlp --dir mine   writes mine/fused_mlp.cpp");
  auto target = std::make_shared<std::string>();
  auto folder = std::make_shared<std::string>(".");
  pair_command->add_option("target", *target, "group:name, e.g. mine:fused_mlp")->required();
  auto python = std::make_shared<bool>(false);
  pair_command->add_option("--dir", *folder, "where to write (default: the current folder)");
  pair_command->add_flag("--python", *python, "write NAME.py, a PyTorch pair file for `--python`, instead");
  pair_command->callback([=, &result] { result.exit_code = new_pair(*target, *folder, *python); });
}

}  // namespace aisp::cli
