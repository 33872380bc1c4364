// `aisp triage`: one bundle to attach to a bug report. What this machine is (`info`), the
// ceilings `aisp hw` cached for its GPUs, the environment gate's findings, a short probe suite
// (`bench verify` of a host pair everywhere and a GPU pair where a GPU is usable, validation
// sizes only), and the newest run's results and logs. Reads and runs checks; changes nothing.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "aisp/check.hpp"
#include "audit/environment_gate.hpp"
#include "cli/commands.hpp"
#include "hw/ceilings.hpp"
#include "hw/system_info.hpp"
#include "runner/worker_process.hpp"
#include "support/json_file.hpp"
#include "support/paths.hpp"
#include "support/shell_quote.hpp"

namespace aisp::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::uintmax_t max_log_bytes = 4u << 20;  // a log larger than this is left out (named in MANIFEST)

struct triage_options {
  std::string output;
  std::string artifacts = artifacts_root();
  bool skip_probe = false;
};

// The newest run folder (one holding results.json) under `artifacts`, or "" when there is none.
fs::path newest_run(const fs::path& artifacts) {
  fs::path newest;
  fs::file_time_type when{};
  std::error_code error;
  if (!fs::is_directory(artifacts, error)) return newest;
  for (const auto& entry : fs::directory_iterator(artifacts, error)) {
    const auto results = entry.path() / "results.json";
    if (!fs::exists(results, error)) continue;
    const auto time = fs::last_write_time(results, error);
    if (newest.empty() || time > when) newest = entry.path(), when = time;
  }
  return newest;
}

void write_json(const fs::path& file, const json& document) { write_json_file(file.string(), document, 2); }

int triage(const triage_options& options) {
  const fs::path output = options.output.empty() ? fs::path(fmt::format("aisp-triage-{}.tar.gz", std::time(nullptr))) : fs::path(options.output);
  AISP_EXPECTS(output.string().ends_with(".tar.gz"), "--output must name a .tar.gz file, not '" + output.string() + "'");
  // Checked before anything is collected: a bundle that cannot be written was once collected first.
  const fs::path output_folder = output.has_parent_path() ? output.parent_path() : fs::path(".");
  AISP_EXPECTS(fs::is_directory(output_folder) && ::access(output_folder.c_str(), W_OK) == 0,
               "--output " + output.string() + ": " + output_folder.string() + " is not a folder this user can write to");
  const fs::path bundle = fs::temp_directory_path() / fmt::format("aisp-triage-{}-{}", std::time(nullptr), ::getpid());
  fs::create_directories(bundle / "logs");
  std::vector<std::string> manifest;

  std::fprintf(stderr, "[triage] info, environment, hw cache\n");
  const auto system = probe_system();
  write_json(bundle / "info.json", to_json(system));
  manifest.push_back("info.json: the GPUs, driver, libraries and host (`aisp info --json`)");
  write_json(bundle / "environment.json", to_json(read_environment("auto")));
  manifest.push_back("environment.json: the environment gate's readings and findings (profile auto)");
  std::error_code error;
  const auto cache = cache_directory();
  if (fs::is_directory(cache, error)) {
    fs::create_directories(bundle / "hw");
    for (const auto& entry : fs::recursive_directory_iterator(cache, error)) {
      if (entry.is_regular_file(error) && entry.path().extension() == ".json") {
        fs::copy_file(entry.path(), bundle / "hw" / entry.path().filename(), fs::copy_options::overwrite_existing, error);
      }
    }
    manifest.push_back("hw/: the ceilings `aisp hw` cached (" + cache.string() + ")");
  } else {
    manifest.push_back("hw/: none: `aisp hw` has not run on this machine");
  }

  if (!options.skip_probe) {
    std::vector<std::string> probes = {"labs/host:matrix_sum"};
    if (system.gpu_absence_reason.empty()) probes.push_back("ch07:vectorized_copy");
    for (const auto& target : probes) {
      std::fprintf(stderr, "[triage] probe: bench verify --targets %s --validation-sizes-only\n", target.c_str());
      const std::string slug = file_safe(target);
      const fs::path dir = bundle / "probe" / slug;
      const auto command = fmt::format("{} bench verify --targets {} --validation-sizes-only --history none --quiet --artifacts-dir {} > {} 2>&1",
                                       shell_quoted(current_executable()), shell_quoted(target), shell_quoted(dir.string()),
                                       shell_quoted((bundle / "probe" / (slug + ".out")).string()));
      fs::create_directories(bundle / "probe");
      const int status = std::system(command.c_str());
      manifest.push_back(fmt::format("probe/{}: `bench verify --targets {} --validation-sizes-only`, exit status {}", slug, target, status));
    }
    if (!system.gpu_absence_reason.empty()) manifest.push_back("probe: no GPU probe: " + system.gpu_absence_reason);
  }

  const auto run = newest_run(options.artifacts);
  if (!run.empty()) {
    for (const auto& entry : fs::recursive_directory_iterator(run, error)) {
      if (!entry.is_regular_file(error)) continue;
      const auto relative = fs::relative(entry.path(), run, error);
      if (entry.file_size(error) > max_log_bytes) {
        manifest.push_back("logs/" + relative.string() + ": left out, over 4 MiB");
        continue;
      }
      fs::create_directories((bundle / "logs" / relative).parent_path(), error);
      fs::copy_file(entry.path(), bundle / "logs" / relative, fs::copy_options::overwrite_existing, error);
    }
    manifest.push_back("logs/: the newest run's results and logs (" + run.string() + ")");
  } else {
    manifest.push_back("logs/: none: no run with results.json under " + options.artifacts);
  }

  std::ofstream text(bundle / "MANIFEST.txt");
  text << "aisp triage bundle, aisp " << system.aisp_version << "\n";
  for (const auto& line : manifest) text << "- " << line << "\n";
  text.close();
  const auto pack = fmt::format("tar czf {} -C {} . 2>&1", shell_quoted(fs::absolute(output).string()), shell_quoted(bundle.string()));
  const int packed = std::system(pack.c_str());
  fs::remove_all(bundle, error);
  AISP_EXPECTS(packed == 0, "tar could not write " + output.string());
  std::printf("triage bundle: %s (%zu entries; see MANIFEST.txt inside)\n", output.string().c_str(), manifest.size());
  return 0;
}

}  // namespace

void add_triage_command(CLI::App& app, outcome& result) {
  auto options = std::make_shared<triage_options>();
  auto* triage_command = app.add_subcommand(
      "triage", "One bundle for a bug report: info, environment gate, hw cache, a probe suite, the newest run's logs.");
  triage_command->footer(
      "The probe suite is `bench verify --validation-sizes-only` of labs/host:matrix_sum, and of ch07:vectorized_copy where a "
      "GPU is usable. Nothing on the machine is changed.\nExample: aisp triage --output bug-1234.tar.gz");
  triage_command->add_option("--output", options->output, "the bundle to write (default aisp-triage-<time>.tar.gz)");
  triage_command->add_option("--artifacts", options->artifacts, "where runs are (default artifacts): the newest one's logs go in");
  triage_command->add_flag("--skip-probe", options->skip_probe, "leave out the probe suite");
  triage_command->callback([options, &result] { result.exit_code = triage(*options); });
}

}  // namespace aisp::cli
