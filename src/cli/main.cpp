// aisp: the command-line front of the harness. Exit codes: 0 success, 1 something measured
// failed (verification, crash, timeout), 2 bad usage or input.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "cli/commands.hpp"
#include "hw/system_info.hpp"
#include "support/readable_error.hpp"
#include "support/shell_quote.hpp"

namespace {

// argv as one line a shell would split back into the same words (plain words stay unquoted).
std::string shell_quoted(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i > 0 ? " " : "") + aisp::shell_word(argv[i]);
  return line;
}

bool verbose = false;

// Users see the message; `--verbose` (or AISP_VERBOSE=1) adds where in aisp it was raised.
std::string shown(const char* what) {
  const char* env = std::getenv("AISP_VERBOSE");
  return verbose || (env != nullptr && std::string_view(env) == "1") ? std::string(what) : aisp::without_source_locations(what);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"aisp: time baseline/optimized GPU kernel pairs, verify them, and catch benchmarks that lie.\n"
               "Start with `aisp info`, `aisp bench list-targets` and `aisp bench run --targets ch07`."};
  app.set_version_flag("--version", aisp::aisp_version());
  app.require_subcommand(1);
  app.add_flag("--verbose", verbose, "errors also say where in aisp they were raised (source file, line, expression)");
  app.fallthrough();
  aisp::cli::outcome result;
  result.command_line = shell_quoted(argc, argv);
  aisp::cli::add_info_command(app, result);
  aisp::cli::add_bench_commands(app, result);
  aisp::cli::add_hw_command(app, result);
  aisp::cli::add_new_command(app, result);
  aisp::cli::add_profile_command(app, result);
  aisp::cli::add_tools_command(app, result);
  aisp::cli::add_triage_command(app, result);
  aisp::cli::add_mcp_command(app, result);
  aisp::cli::add_serve_command(app, result);
  aisp::cli::add_worker_command(app, result);
  // A first word that is no command (nor an option) gets its own line, not CLI11's "a subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const auto* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      if (!sub->get_group().empty()) names += (names.empty() ? "" : ", ") + sub->get_name();  // hidden: the worker
    }
    if (!known) {
      std::fprintf(stderr, "aisp: error: unknown command '%s' (commands: %s; see --help)\n", argv[1], names.c_str());
      return 2;
    }
  }
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
    std::fprintf(stderr, "aisp: error: %s\n", shown(error.what()).c_str());
    return 2;
  } catch (const nlohmann::json::exception& error) {
    // A JSON file (results, history export, expectations) whose values are not the types aisp
    // wrote: a bad input, said in one line.
    std::fprintf(stderr, "aisp: error: a JSON input is not as aisp writes it: %s\n", aisp::without_json_prefix(error.what()).c_str());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "aisp: error: %s\n", shown(error.what()).c_str());
    return 1;
  }
  return result.exit_code;
}
