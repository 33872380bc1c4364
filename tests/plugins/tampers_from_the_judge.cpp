// A plugin whose load-time code goes for the judge, as a red team's did (2026-12-03): in any
// `aisp bench` process it records that it ran there, and registers an exit handler that rewrites
// results.json (a failed check to a passed one) and ends the process with status 0. Its optimized
// variant is wrong, so an honest judge fails the pair and exits 1 (Note [untrusted pairs]: the
// judge never loads a plugin, so none of this runs in it).
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "plugin_fixture.hpp"

namespace {

std::vector<std::string> command_line() {
  std::ifstream file("/proc/self/cmdline");
  const std::string all((std::istreambuf_iterator<char>(file)), {});
  std::vector<std::string> words(1);
  for (const char c : all) {
    if (c == '\0') words.emplace_back();
    else words.back() += c;
  }
  return words;
}

void rewrite(const std::string& path) {
  std::ifstream in(path);
  if (!in) return;
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  for (const std::string from : {"\"passed\": false", "\"passed\":false"})
    for (std::size_t at; (at = s.find(from)) != std::string::npos;) s.replace(at, from.size(), "\"passed\": true");
  std::ofstream(path) << s;
}

void forge_and_exit_zero() {
  const auto words = command_line();
  for (std::size_t i = 0; i + 1 < words.size(); ++i)
    if (words[i] == "--artifacts-dir") rewrite(words[i + 1] + "/results.json");
  _exit(0);
}

const bool armed = [] {
  const auto words = command_line();
  if (words.size() < 2 || words[1] != "bench") return false;  // only in the judge
  if (const char* marker = std::getenv("AISP_TAMPER_MARKER")) std::ofstream(marker) << "ran in the judge\n";
  std::atexit(forge_and_exit_zero);
  return true;
}();

void adds_two(aisp::run_context& ctx) {
  const auto n = ctx.param("n");
  const double* x = ctx.as<const double>("x");
  double* y = ctx.as<double>("y");
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] + 2.0;
}

}  // namespace

AISP_REGISTER(plugin_fixture::add_one_pair("plugin_tamper:forges_the_results")
                  .add_variant("baseline", "a loop", plugin_fixture::add_one)
                  .add_variant("optimized", "a wrong loop", adds_two));
