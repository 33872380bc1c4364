// Runs started by MCP clients (issue 23): each job is an `aisp bench run` (or verify) of this
// executable in its own process group, its output read without blocking, its progress taken
// from the "[k/n] target" lines the CLI prints, its results landing in the history database like
// a CLI run's. Polled by the server's loop; nothing here blocks.
#pragma once

#include <sys/types.h>

#include <deque>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace aisp::mcp {

struct run_request {
  std::string targets;      // as --targets takes them
  bool verify_only = false; // bench verify instead of bench run
  double max_time_s = 0;    // 0: the CLI's default
  std::string python;       // a Python pair file (--python), or ""
};

struct run_job {
  int id = 0;
  pid_t pid = -1;
  int output_fd = -1;
  std::string artifacts_dir;
  std::string state = "running";  // running | done | failed | cancelled
  int exit_code = -1;
  int pairs_done = 0;
  int pairs_total = 0;
  std::string partial_line;
  std::deque<std::string> last_lines;  // the output's last lines, for status
  std::size_t lines_read = 0;          // every line so far: a follower sends those past its count
};

class job_table {
 public:
  // `db_path`: the history the runs write to; `jobs_dir`: where each job's artifacts go.
  job_table(std::string db_path, std::string jobs_dir);
  ~job_table();
  job_table(const job_table&) = delete;
  job_table& operator=(const job_table&) = delete;

  // Starts a job; throws contract_error (one line) for a request it cannot start.
  int start(const run_request& request);
  // Reads what every running job printed and reaps the ended ones. Returns the ids whose
  // progress or state changed.
  std::vector<int> poll();
  [[nodiscard]] const run_job* find(int id) const;
  // Every job's id, oldest first.
  [[nodiscard]] std::vector<int> ids() const;
  // state, progress, the last lines; with the results (api::summarize_results) once it ended.
  [[nodiscard]] nlohmann::json status(int id) const;
  // SIGTERM to the job's process group; false when it is not running.
  bool cancel(int id);
  // cancel(), then status() with `cancelled`: whether this call stopped it (MCP and REST answer it).
  [[nodiscard]] nlohmann::json cancel_with_status(int id);
  [[nodiscard]] bool any_running() const;

 private:
  std::string db_path_;
  std::string jobs_dir_;
  int next_id_ = 1;
  std::map<int, run_job> jobs_;
};

// The command line a request becomes (without the executable), for tests and the job's record.
[[nodiscard]] std::vector<std::string> run_arguments(const run_request& request, const std::string& db_path,
                                                     const std::string& artifacts_dir);

}  // namespace aisp::mcp
