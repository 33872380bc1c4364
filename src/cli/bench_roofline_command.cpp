// `aisp bench roofline --run R`: the roofline of one run as an SVG file (see results/roofline_svg).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "cli/commands.hpp"
#include "results/result_json.hpp"
#include "results/roofline_svg.hpp"

namespace aisp::cli {
namespace {

int draw_roofline(const std::string& run, std::string output) {
  const auto document = read_results_document(run);
  std::filesystem::path results = run;
  if (std::filesystem::is_directory(results)) results /= "results.json";
  if (output.empty()) output = (results.parent_path() / "roofline.svg").string();
  std::ofstream out(output);
  out << roofline_svg(document);
  AISP_EXPECTS(out.good(), "cannot write " + output);
  std::printf("roofline: %s\n", output.c_str());
  return 0;
}

}  // namespace

void add_bench_roofline_command(CLI::App& bench, outcome& result) {
  auto* roofline = bench.add_subcommand("roofline",
                                        "Draw a run as a roofline SVG: the ceilings it was judged against as lines, each\n"
                                        "variant with FLOPs as a labelled point, copy-like variants as SOL % bars.");
  auto run = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  roofline->add_option("--run", *run, "the run's artifacts folder (or its results.json)")->required();
  roofline->add_option("--output", *output, "the SVG file (default: roofline.svg beside results.json)");
  roofline->callback([=, &result] { result.exit_code = draw_roofline(*run, *output); });
}

}  // namespace aisp::cli
