// The tools that start and follow runs (issue 23): start_run, job_status, wait_job (its waiting
// is the server's: Note [waiting calls] in mcp_server.cpp), cancel_job; and hardware_ceilings.
#include "api/results_api.hpp"
#include "mcp/mcp_tools.hpp"
#include "mcp/run_jobs.hpp"

namespace aisp::mcp {
namespace {

using nlohmann::json;

json job_property() { return {{"type", "integer"}, {"minimum", 1}, {"description", "the job id (start_run)"}}; }

}  // namespace

void add_job_tools(std::vector<tool>& tools, job_table& jobs) {
  job_table* table = &jobs;
  tools.push_back(
      {"start_run", "Start a benchmark run",
       "Starts `aisp bench run` (or `bench verify` with verify) of the targets as a job and returns its id at once. Follow "
       "it with wait_job (progress notifications while it runs) or job_status; cancel_job stops it. Its results land in "
       "the history like a CLI run's.",
       object_schema({{"targets", {{"type", "string"}, {"description", "as --targets takes them: labs/host, ch07:copy, mine:pair"}}},
                      {"verify", {{"type", "boolean"}, {"description", "bench verify: every check, no timing claims"}}},
                      {"max_time_s", {{"type", "number"}, {"exclusiveMinimum", 0}, {"description", "sampling time limit per pair, seconds (default 5, as --max-time)"}}},
                      {"python", {{"type", "string"}, {"description", "a Python pair file to load (--python)"}}}},
                     {"targets"}),
       job_status_schema(),
       [table](const json& a) {
         run_request request{a["targets"].get<std::string>(), a.value("verify", false), a.value("max_time_s", 0.0),
                             a.value("python", std::string())};
         const int id = table->start(request);
         return table->status(id);
       }});
  tools.push_back({"job_status", "A job's status",
                   "A job's state (running, done, failed, cancelled), pairs done of total, its last output lines, and once it "
                   "ended its exit code and results: per pair the status, verdicts with CIs and failed checks.",
                   object_schema({{"job", job_property()}}, {"job"}), job_status_schema(),
                   [table](const json& a) { return table->status(a["job"].get<int>()); }});
  tools.push_back({"wait_job", "Wait for a job",
                   "Waits until the job ends or timeout_s passes, sending notifications/progress (pairs done of total) when the "
                   "call carries a progressToken; then returns job_status's answer.",
                   object_schema({{"job", job_property()},
                                  {"timeout_s", {{"type", "number"}, {"minimum", 0}, {"description", "at most this long (default 600)"}}}},
                                 {"job"}),
                   job_status_schema(), [table](const json& a) { return table->status(a["job"].get<int>()); }});
  tools.push_back({"cancel_job", "Cancel a job", "Stops a running job (SIGTERM to its run and workers); its partial results stay.",
                   object_schema({{"job", job_property()}}, {"job"}), job_status_schema(),
                   [table](const json& a) { return table->cancel_with_status(a["job"].get<int>()); }});
  tools.push_back({"hardware_ceilings", "Measured hardware ceilings",
                   "The ceilings `aisp hw` measured on this machine, per card and driver: memory bandwidth, FP32 and tensor-core "
                   "peaks, PCIe and interconnect bandwidth. SOL % divides by these.",
                   object_schema(json::object(), {}), result_schema({{"cards", typed("array")}}, {"cards"}),
                   [](const json&) { return json{{"cards", api::hardware_ceilings()}}; }});
}

}  // namespace aisp::mcp
