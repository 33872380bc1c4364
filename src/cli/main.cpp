// aisp: the command-line front of the harness. Exit codes: 0 success, 1 something measured
// failed (verification, crash, timeout), 2 bad usage or input.
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "cli/commands.hpp"
#include "hw/system_info.hpp"

namespace {

// argv as one line a shell would split back into the same words: words with anything but
// [A-Za-z0-9_./:=+,@%-] are single-quoted.
std::string shell_quoted(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    const std::string_view word = argv[i];
    const bool plain = !word.empty() && word.find_first_not_of(
                                            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                            "0123456789_./:=+,@%-") == std::string_view::npos;
    if (i > 0) line += ' ';
    if (plain) {
      line += word;
      continue;
    }
    line += '\'';
    for (const char c : word) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"aisp: time baseline/optimized GPU kernel pairs, verify them, and catch benchmarks that lie.\n"
               "Start with `aisp info`, `aisp bench list-targets` and `aisp bench run --targets ch07`."};
  app.set_version_flag("--version", aisp::aisp_version());
  app.require_subcommand(1);
  aisp::cli::outcome result;
  result.command_line = shell_quoted(argc, argv);
  aisp::cli::add_info_command(app, result);
  aisp::cli::add_bench_commands(app, result);
  aisp::cli::add_hw_command(app, result);
  aisp::cli::add_worker_command(app, result);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const CLI::ParseError& error) {
    std::fprintf(stderr, "aisp: error: %s (see --help)\n", error.what());
    return 2;
  } catch (const aisp::contract_error& error) {
    std::fprintf(stderr, "aisp: error: %s\n", error.what());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "aisp: error: %s\n", error.what());
    return 1;
  }
  return result.exit_code;
}
