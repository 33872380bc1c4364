#include "mcp/run_jobs.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <regex>
#include <utility>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "api/results_api.hpp"
#include "runner/target_selector.hpp"

namespace aisp::mcp {
namespace {

constexpr std::size_t kept_lines = 20;

std::string own_executable() {
  std::error_code error;
  return std::filesystem::read_symlink("/proc/self/exe", error).string();
}

// "[3/12] ch07:copy..." -> 3 of 12.
void read_progress(run_job& job, const std::string& line) {
  static const std::regex counter(R"(^\[(\d+)/(\d+)\])");
  std::smatch parts;
  if (std::regex_search(line, parts, counter)) {
    job.pairs_done = std::stoi(parts[1]);
    job.pairs_total = std::stoi(parts[2]);
  }
}

}  // namespace

std::vector<std::string> run_arguments(const run_request& request, const std::string& db_path, const std::string& artifacts_dir) {
  std::vector<std::string> args = {"bench", request.verify_only ? "verify" : "run", "--targets", request.targets,
                                   "--history", db_path, "--artifacts-dir", artifacts_dir};
  if (request.max_time_s > 0 && !request.verify_only) {
    args.push_back("--max-time");
    args.push_back(fmt::format("{}", request.max_time_s));
  }
  if (!request.python.empty()) {
    args.push_back("--python");
    args.push_back(request.python);
  }
  return args;
}

job_table::job_table(std::string db_path, std::string jobs_dir) : db_path_(std::move(db_path)), jobs_dir_(std::move(jobs_dir)) {}

job_table::~job_table() {
  for (auto& [id, job] : jobs_) {
    if (job.state == "running") kill(-job.pid, SIGTERM);
    if (job.output_fd >= 0) close(job.output_fd);
  }
}

int job_table::start(const run_request& request) {
  AISP_EXPECTS(!request.targets.empty(), "targets must name at least one target (e.g. labs/host)");
  AISP_EXPECTS(request.targets.find_first_of("\n\r") == std::string::npos, "targets must be one line");
  AISP_EXPECTS(request.python.empty() || std::filesystem::is_regular_file(request.python), "no pair file " + request.python);
  // Unknown targets are refused here, in the tool's answer, not found later in a failed job's
  // output (a user's walkthrough, 2026-12-04). A pair file's targets are its own: known only
  // once the job loads it.
  if (request.python.empty()) {
    std::vector<std::string> words;
    std::string word;
    for (const char c : request.targets + " ") {
      if (c == ',' || c == ' ' || c == '\t') {
        if (!word.empty()) words.push_back(std::exchange(word, ""));
      } else {
        word += c;
      }
    }
    (void)select_targets(registry::instance(), words);
  }
  const int id = next_id_++;
  run_job job;
  job.id = id;
  job.artifacts_dir = (std::filesystem::path(jobs_dir_) / fmt::format("job-{}-{}", getpid(), id)).string();
  const auto args = run_arguments(request, db_path_, job.artifacts_dir);
  const auto program = own_executable();
  int pipe_fds[2];
  AISP_EXPECTS(pipe2(pipe_fds, O_CLOEXEC) == 0, "cannot make a pipe for the job");
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // its own group: cancel stops the run and its workers together
    const int null_in = open("/dev/null", O_RDONLY);
    dup2(null_in, 0);
    dup2(pipe_fds[1], 1);  // stdout is the MCP channel in the server: never the job's
    dup2(pipe_fds[1], 2);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  if (pid < 0) {
    close(pipe_fds[0]);
    AISP_EXPECTS(false, "cannot start the run: fork failed");
  }
  setpgid(pid, pid);
  fcntl(pipe_fds[0], F_SETFL, fcntl(pipe_fds[0], F_GETFL) | O_NONBLOCK);
  job.pid = pid;
  job.output_fd = pipe_fds[0];
  jobs_.emplace(id, std::move(job));
  return id;
}

std::vector<int> job_table::poll() {
  std::vector<int> changed;
  for (auto& [id, job] : jobs_) {
    if (job.output_fd < 0) continue;
    const int before_done = job.pairs_done;
    char chunk[4096];
    ssize_t got = 0;
    while ((got = read(job.output_fd, chunk, sizeof chunk)) > 0) {
      job.partial_line.append(chunk, static_cast<std::size_t>(got));
      for (std::size_t end; (end = job.partial_line.find('\n')) != std::string::npos;) {
        const auto line = job.partial_line.substr(0, end);
        job.partial_line.erase(0, end + 1);
        read_progress(job, line);
        job.last_lines.push_back(line);
        ++job.lines_read;
        if (job.last_lines.size() > kept_lines) job.last_lines.pop_front();
      }
    }
    int status = 0;
    const bool ended = got == 0 && waitpid(job.pid, &status, WNOHANG) == job.pid;
    if (ended) {
      close(job.output_fd);
      job.output_fd = -1;
      job.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      // bench run exits 1 when a pair failed: the job did its work, the results say what failed.
      if (job.state != "cancelled") job.state = WIFEXITED(status) && job.exit_code <= 1 ? "done" : "failed";
    }
    if (ended || job.pairs_done != before_done) changed.push_back(id);
  }
  return changed;
}

const run_job* job_table::find(int id) const {
  const auto found = jobs_.find(id);
  return found == jobs_.end() ? nullptr : &found->second;
}

std::vector<int> job_table::ids() const {
  std::vector<int> out;
  for (const auto& [id, job] : jobs_) out.push_back(id);
  return out;
}

nlohmann::json job_table::status(int id) const {
  const auto* job = find(id);
  AISP_EXPECTS(job != nullptr, fmt::format("no job {} (start one with start_run)", id));
  nlohmann::json out = {{"job", id},
                        {"state", job->state},
                        {"pairs_done", job->pairs_done},
                        {"pairs_total", job->pairs_total},
                        {"artifacts_dir", job->artifacts_dir},
                        {"last_lines", std::vector<std::string>(job->last_lines.begin(), job->last_lines.end())}};
  if (job->state != "running") {
    out["exit_code"] = job->exit_code;
    const auto results = std::filesystem::path(job->artifacts_dir) / "results.json";
    if (std::filesystem::exists(results)) out["results"] = api::summarize_results(results.string());
  }
  return out;
}

bool job_table::cancel(int id) {
  auto found = jobs_.find(id);
  if (found == jobs_.end() || found->second.state != "running") return false;
  kill(-found->second.pid, SIGTERM);
  found->second.state = "cancelled";
  return true;
}

nlohmann::json job_table::cancel_with_status(int id) {
  (void)status(id);  // an unknown job is an error
  const bool cancelled = cancel(id);
  auto answer = status(id);
  answer["cancelled"] = cancelled;
  return answer;
}

bool job_table::any_running() const {
  for (const auto& [id, job] : jobs_) {
    if (job.output_fd >= 0) return true;
  }
  return false;
}

}  // namespace aisp::mcp
