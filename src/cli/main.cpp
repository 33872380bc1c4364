// aisp: the command-line front of the harness. Exit codes: 0 success, 1 something measured
// failed (verification, crash, timeout), 2 bad usage or input.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "cli/commands.hpp"
#include "hw/system_info.hpp"
#include "support/edit_distance.hpp"
#include "support/readable_error.hpp"
#include "support/shell_quote.hpp"

namespace {

using aisp::edit_distance;

// argv as one line a shell would split back into the same words (plain words stay unquoted).
std::string shell_quoted(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i > 0 ? " " : "") + aisp::shell_word(argv[i]);
  return line;
}

bool verbose = false;

// A word that is no command where a command is due (`aisp bench nope`), or a group of commands
// given none (`aisp tools`), gets its own line naming the commands there, not CLI11's "a
// subcommand is required". The walk stops at the first option: CLI11 judges the rest.
std::optional<std::string> command_path_error(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = &app;
  std::string path = "aisp";
  for (int i = 1;; ++i) {
    const std::vector<const CLI::App*> all = at->get_subcommands([](const CLI::App*) { return true; });
    std::vector<const CLI::App*> shown;  // the hidden worker has no group
    std::copy_if(all.begin(), all.end(), std::back_inserter(shown), [](const CLI::App* sub) { return !sub->get_group().empty(); });
    if (shown.empty()) return std::nullopt;
    std::string names;
    for (const auto* sub : shown) names += (names.empty() ? "" : ", ") + sub->get_name();
    const std::string_view word = i < argc ? argv[i] : "";
    const bool is_help = word == "-h" || word.starts_with("--help");
    if (i >= argc || (word.starts_with('-') && !is_help && at != &app)) {
      if (at->get_require_subcommand_min() == 0) return std::nullopt;
      return fmt::format("{} needs a command: {} (see {} --help)", path, names, path);
    }
    if (word.starts_with('-')) return std::nullopt;
    const auto next = std::find_if(all.begin(), all.end(), [&](const CLI::App* sub) { return sub->get_name() == word; });
    if (next == all.end()) {
      // A command that starts with the word, or the word with it: `compare` -> compare-runs.
      const auto close = std::find_if(shown.begin(), shown.end(), [&](const CLI::App* sub) {
        return std::string_view(sub->get_name()).starts_with(word) || word.starts_with(sub->get_name());
      });
      if (close != shown.end()) return fmt::format("unknown command '{} {}'; did you mean '{} {}'? (see {} --help)", path, word, path, (*close)->get_name(), path);
      return at == &app ? fmt::format("unknown command '{}' (commands: {}; see --help)", word, names)
                        : fmt::format("unknown command '{} {}' ({} has: {}; see {} --help)", path, word, path, names, path);
    }
    at = *next;
    path += " " + std::string(word);
  }
}

// An option the command does not take (`aisp bench run --target ch07`): CLI11 says "The following
// arguments were not expected: ch07 --target"; this names the option, the command and the
// nearest option it has ("did you mean --targets?"). nullopt where no word is such an option.
std::optional<std::string> unknown_option_error(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = &app;
  std::string path = "aisp";
  int i = 1;
  for (; i < argc && !std::string_view(argv[i]).starts_with('-'); ++i) {
    const auto subs = at->get_subcommands([](const CLI::App*) { return true; });
    const auto next = std::find_if(subs.begin(), subs.end(), [&](const CLI::App* sub) { return sub->get_name() == argv[i]; });
    if (next == subs.end()) break;
    at = *next;
    path += " " + std::string(argv[i]);
  }
  std::vector<std::string> names;
  for (const CLI::App* command = at; command != nullptr; command = command->get_parent()) {
    for (const CLI::Option* option : command->get_options())
      for (const auto& name : option->get_lnames()) names.push_back(name);
  }
  for (; i < argc; ++i) {
    std::string_view word = argv[i];
    if (!word.starts_with("--") || word == "--") continue;
    word.remove_prefix(2);
    word = word.substr(0, word.find('='));
    if (std::find(names.begin(), names.end(), word) != names.end()) continue;
    std::string nearest;
    std::size_t best = 3;  // at most two edits, or a prefix either way
    for (const auto& name : names) {
      const std::size_t distance = name.starts_with(word) || word.starts_with(name) ? 1 : edit_distance(word, name);
      if (distance < best) {
        best = distance;
        nearest = name;
      }
    }
    return fmt::format("'{}' takes no option --{}{} (see {} --help)", path, word, nearest.empty() ? "" : "; did you mean --" + nearest + "?",
                       path);
  }
  return std::nullopt;
}

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
  if (const auto why = command_path_error(app, argc, argv)) {
    std::fprintf(stderr, "aisp: error: %s\n", why->c_str());
    return 2;
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
    if (const auto* extras = dynamic_cast<const CLI::ExtrasError*>(&error); extras != nullptr) {
      if (const auto why = unknown_option_error(app, argc, argv)) {
        std::fprintf(stderr, "aisp: error: %s\n", why->c_str());
        return 2;
      }
    }
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
  } catch (const std::filesystem::filesystem_error& error) {
    // A path the user gave that cannot be made, read or written: bad input, said in one line.
    std::fprintf(stderr, "aisp: error: %s\n", error.what());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "aisp: error: %s\n", shown(error.what()).c_str());
    return 1;
  }
  return result.exit_code;
}
