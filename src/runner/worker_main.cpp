#include "runner/worker_main.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "aisp/nccl.hpp"
#include "aisp/registry.hpp"
#include "audit/clock_interposition.hpp"
#include "audit/cupti_recorder.hpp"
#include "audit/cupti_watch.hpp"
#include "audit/library_precision.hpp"
#include "audit/timeline_json.hpp"
#include "harness/plugin_loader.hpp"
#include "harness/fp_mode_sampler.hpp"
#include "harness/process_probes.hpp"
#include "harness/variant_session.hpp"
#include "harness/worker_state.hpp"
#include "runner/pair_host_ops.hpp"
#include "runner/worker_protocol.hpp"
#include "runner/worker_sandbox.hpp"
#include "support/warm_heap.hpp"

namespace aisp {
namespace {

using nlohmann::json;

// Note [worker sandbox]: the channel is the worker's private copy of the stdout socket. fd 1
// then points at an anonymous file, so nothing a variant prints reaches the judge and how much
// it printed is measurable (V1); stage 2 of the sandbox lets only write_reply() write to it.
// Under the descriptor limit, and at most 1000 (the kernel sizes the table to the highest fd).
int channel_fd_floor() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur < 64) return 3;
  return static_cast<int>(std::min<rlim_t>(limit.rlim_cur - 24, 1000));
}

class reply_channel {
 public:
  // A high descriptor: stage 2 denies writes to this number from anywhere but write_reply(), and
  // a compiler the worker may run (Note [compilers in the sandbox]) opens files from 3 up.
  reply_channel() : fd_(fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, channel_fd_floor())) {
    std::fflush(stdout);
    std::FILE* sink = std::tmpfile();
    dup2(sink != nullptr ? fileno(sink) : STDERR_FILENO, STDOUT_FILENO);
    stray_copies_ = close_stray_copies();
  }
  reply_channel(const reply_channel&) = delete;
  reply_channel& operator=(const reply_channel&) = delete;

  [[nodiscard]] int fd() const { return fd_; }
  // Descriptors on the channel found (and closed) before main() ran: a static initializer's dup.
  [[nodiscard]] int stray_copies() const { return stray_copies_; }

  void send(json message) {
    if (const auto denied = sandbox::denials_so_far(); !denied.empty()) {
      json listed = json::array();
      for (const auto& d : denied) {
        listed.push_back({{"what", sandbox::denial_name(d.kind)}, {"code", sandbox::denial_code(d.kind)}, {"count", d.count}});
      }
      message["sandbox_denials"] = std::move(listed);
    }
    if (auto tampering = take_audit_tampering(); !tampering.empty()) message["audit_tampering"] = std::move(tampering);
    const std::string line = message.dump() + "\n";
    sandbox::write_reply(fd_, line.data(), line.size());
  }

 private:
  int close_stray_copies() const {
    struct stat channel {};
    if (fstat(fd_, &channel) != 0) return 0;
    int closed = 0;
    for (int fd = 0; fd < 1024; ++fd) {
      struct stat other {};
      if (fd == fd_ || fstat(fd, &other) != 0) continue;
      if (other.st_dev == channel.st_dev && other.st_ino == channel.st_ino) closed += close(fd) == 0;
    }
    return closed;
  }

  int fd_;
  int stray_copies_ = 0;
};

// Note [ranks]: the NCCL communicator of this worker's rank, from the unique id the judge made.
class rank_communicator {
 public:
  rank_communicator(const std::string& hex_id, int world_size, int rank) {
    ncclUniqueId id{};
    AISP_EXPECTS(hex_id.size() == 2 * sizeof id.internal, "malformed NCCL unique id");
    for (std::size_t i = 0; i < sizeof id.internal; ++i) {
      id.internal[i] = static_cast<char>(std::stoi(hex_id.substr(2 * i, 2), nullptr, 16));
    }
    AISP_NCCL_CHECK(nccl().comm_init_rank(&comm_, world_size, id, rank));
  }
  ~rank_communicator() {
    if (comm_ != nullptr) static_cast<void>(nccl().comm_destroy(comm_));
  }
  rank_communicator(const rank_communicator&) = delete;
  rank_communicator& operator=(const rank_communicator&) = delete;
  [[nodiscard]] void* get() const { return comm_; }

 private:
  ncclComm_t comm_ = nullptr;
};

json load_report_to_json(const load_report& report) {
  return {{"setup_s", report.setup_s},
          {"warmup_s", report.warmup_s},
          {"warmup_calls", report.warmup_calls},
          {"calls_per_sample", report.calls_per_sample},
          {"estimated_call_s", report.estimated_call_s},
          {"buffer_bytes", report.buffer_bytes},
          {"setup_wrote_outputs", report.setup_wrote_outputs},
          {"setup_mutated_inputs", report.setup_mutated_inputs},
          {"setup_subnormal_inputs", report.setup_subnormal_inputs},
          {"access_policy", report.access_policy},
          {"library_precision", report.library_precision},
          {"notes", protocol::notes_to_json(report.notes)}};
}

json snapshot_to_json(const process_snapshot& s) {
  return {{"threads", s.threads}, {"children", s.children}, {"allocations", s.allocations}, {"c_allocations", s.c_allocations},
          {"mappings", s.mappings}, {"environment_hash", s.environment_hash},
          {"priority", s.priority}, {"stdout_bytes", s.stdout_bytes}, {"minor_faults", s.minor_faults},
          {"scheduler", s.scheduler}, {"affinity_hash", s.affinity_hash}};
}

json call_report_to_json(const call_report& report) {
  return {{"ok", true},
          {"files", report.files},
          {"mutated_inputs", report.mutated_inputs},
          {"subnormal_inputs", report.subnormal_inputs},
          {"launch_error", report.launch_error},
          {"initial_priority", report.initial_priority},
          {"initial_scheduler", report.initial_scheduler},
          {"initial_affinity_hash", report.initial_affinity_hash},
          {"late_outputs", report.late_outputs},
          {"helper_cpu_after_return_s", report.helper_cpu_after_return_s},
          {"allocation_caller", report.allocation_caller},
          {"before", snapshot_to_json(report.before)},
          {"after", snapshot_to_json(report.after)}};
}

// Note [stopped workers]: a worker stopped by a signal (SIGSTOP, SIGTSTP) from outside its
// sandbox, say by a pair's code running in the judge, pauses while its samples' clocks run on;
// the baseline and its twin stopped alike leave the noise floor tight (a red team's judge-side
// thread stopped every other worker 40% of each millisecond: the same code read 1.79x faster,
// 2026-12-03). A stop cannot be caught, but the SIGCONT that resumes the worker can: each one
// counts, and a sample request reports those that came while it ran.
std::atomic<int> continued_signals{0};
static_assert(std::atomic<int>::is_always_lock_free, "counted in a signal handler");

void count_continue(int) { continued_signals.fetch_add(1, std::memory_order_relaxed); }

void count_continues() {
  struct sigaction action{};
  action.sa_handler = count_continue;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGCONT, &action, nullptr);
}

// How the worker found itself before any request: its sandbox, and what ran before main().
struct sandbox_state {
  std::string state;               // on | unavailable: why
  std::size_t threads_at_start;    // 1 unless a static initializer started threads
  int stray_channel_copies;        // channel descriptors a static initializer had duplicated
};

class worker {
 public:
  worker(sandbox_state sandboxed, reply_channel& replies) : sandboxed_(std::move(sandboxed)), replies_(replies) {}

  json handle(const json& request) {
    const auto op = request.at("op").get<std::string>();
    if (op == "init") return init(request);
    // Note [untrusted pairs] (pair_host.cpp): a pair host loads plugins for the judge, runs nothing timed.
    if (op == "host_load") return pair_host_ops::load(request);
    if (op == "evaluate") return pair_host_ops::evaluate(request);
    if (op == "reference") return pair_host_ops::reference(request);
    AISP_EXPECTS(session_ != nullptr, "request '" + op + "' before init");
    if (op == "load") {
      const auto work = protocol::workload_from_json(request.at("workload"));
      return {{"ok", true},
              {"load", load_report_to_json(session_->load(work, request.value("warmup", true), request.value("benchmark", false)))},
              {"fp_control", floating_point_mode()},  // Note [floating-point environment]: after setup()
              {"timers", armed_timers()},             // Note [armed timers]
              {"state", read_worker_state(host_pair_, session_->host_input_ranges())}};  // Note [worker state]
    }
    if (op == "sample") return sample(request);
    if (op == "truth") return truth(request);
    if (op == "soak") {  // Note [late look] (sampling_rounds.cpp)
      const auto soaked = session_->soak(request.at("count").get<int>(), request.value("most_s", 1.0));
      return {{"ok", true}, {"calls", soaked.calls}, {"wall_s", soaked.wall_s}};
    }
    if (op == "timeline") return write_timeline(request.at("file").get<std::string>());
    if (op == "outputs") {
      std::optional<std::uint64_t> input_seed;
      if (request.contains("input_seed")) input_seed = request.at("input_seed").get<std::uint64_t>();
      std::optional<std::uint64_t> fill_base;
      if (request.contains("fill_base")) fill_base = request.at("fill_base").get<std::uint64_t>();
      return call_report_to_json(session_->verified_call(request.at("prefix").get<std::string>(), input_seed, fill_base));
    }
    if (op == "traffic") {
      std::string why;
      const auto measured = session_->measure_traffic(why);
      if (!measured) return {{"ok", true}, {"unavailable", why}};
      return {{"ok", true}, {"calls", session_->calls_per_batch()}, {"passes", measured->passes},
              {"l2_read_bytes", measured->l2_read_bytes}, {"l2_write_bytes", measured->l2_write_bytes},
              {"dram_read_bytes", measured->dram_read_bytes}, {"dram_write_bytes", measured->dram_write_bytes}};
    }
    if (op == "refill") {
      std::vector<input_values> scattered;  // Note [scattered challenge values]
      for (const auto& level : request.value("scattered", nlohmann::json::array())) scattered.push_back(input_values_named(level.get<std::string>()));
      session_->refill(request.at("seed").get<std::uint64_t>(), input_values_named(request.value("values", std::string("declared"))), scattered,
                       request.value("where_they_live", false));
      return {{"ok", true}};
    }
    if (op == "restore_inputs") {
      session_->restore_inputs(request.at("seed").get<std::uint64_t>());
      return {{"ok", true}};
    }
    if (op == "readdress") {
      session_->readdress(request.at("seed").get<std::uint64_t>());
      return {{"ok", true}};
    }
    if (op == "redraw_copy_alone") {  // Note [a copy's domain]
      session_->redraw_copy_alone(request.at("buffer").get<std::string>(), request.at("seed").get<std::uint64_t>());
      return {{"ok", true}};
    }
    if (op == "move_source_within_its_copies") {
      session_->move_source_within_its_copies(request.at("buffer").get<std::string>());
      return {{"ok", true}};
    }
    if (op == "set_element") {
      session_->set_element(request.at("buffer").get<std::string>(), request.at("index").get<std::size_t>(),
                            request.at("value").get<double>());
      return {{"ok", true}};
    }
    AISP_EXPECTS(false, "unknown request '" + op + "'");
    return {};
  }

 private:
  json sample(const json& request) {
    // Note [audited visits] in cupti_recorder.hpp: a visit is either audited or timed. Which, the
    // worker draws now (Note [verified after the call]): a request that said so sat in the
    // stdin buffer every call of the visit can read.
    const double audit_chance = request.value("audit_chance", request.value("audit", false) ? 1.0 : 0.0);
    const bool drawn = session_->draws_with_chance(audit_chance);  // every rank draws, recorder or not
    const bool audited = recorder_ != nullptr && drawn;
    if (recorder_ != nullptr) recorder_->record_activity(audited);
    sample_plan plan;
    plan.count = request.at("count").get<int>();
    plan.verify_chance = request.value("verify_chance", 0.0);  // Note [verified after the call]
    plan.reservoir = request.value("reservoir", 0);  // Note [verified reservoir]
    plan.offered_before = request.value("offered_before", std::size_t{0});
    plan.probes = request.value("probes", plan.probes);
    if (request.contains("input_base")) plan.input_base = request.at("input_base").get<std::uint64_t>();
    if (request.contains("fill_base")) plan.fill_base = request.at("fill_base").get<std::uint64_t>();
    plan.fresh_inputs = request.value("fresh_inputs", false);
    plan.one_call = request.value("one_call", false);
    const int continued_before = continued_signals.load(std::memory_order_relaxed);
    // Note [contended visits] (contention_check.cpp): the judge takes this process's CPU, its
    // children's included, off the machine's to see what else ran beside the request.
    const double request_cpu_before = take_cpu_reading().process_cpu_s + children_cpu_s();
    // Note [verified after the call]: each verified sample leaves the process as it is taken, so
    // no later call of the variant (which shares this process) can rewrite its probes.
    if (sampled_fp_mode_) begin_fp_mode_sampling();  // Note [sampled fp mode]
    const auto records = session_->sample(plan, [this](const timed_call_fingerprint& fingerprint) {
      replies_.send({{"ok", true}, {"partial", "verified"}, {"record", fingerprint_to_json(fingerprint)}});
    });
    const auto fp_sampled = end_fp_mode_sampling();
    const int continued = continued_signals.load(std::memory_order_relaxed) - continued_before;
    json samples = json::array();
    double timed_wall_s = 0;
    double others_cpu_s = 0;
    int busy_other_threads = 0;
    double child_helpers_cpu_s = 0;
    int busy_child_threads = 0;
    double process_cpu_s = 0;
    double before_window_cpu_s = 0;
    long long timed_faults = 0;
    for (const auto& record : records) {
      samples.push_back(protocol::sample_to_json(record));
      timed_wall_s += record.host_wall_s;
      others_cpu_s += record.other_threads_cpu_s;
      busy_other_threads = std::max(busy_other_threads, record.busy_other_threads);
      child_helpers_cpu_s += record.child_helpers_cpu_s;  // Note [executable pair threads]
      busy_child_threads = std::max(busy_child_threads, record.busy_child_threads);
      process_cpu_s += record.process_cpu_s;
      before_window_cpu_s += record.before_window_cpu_s;
      timed_faults += record.minor_faults;
    }
    const double request_cpu_s = take_cpu_reading().process_cpu_s + children_cpu_s() - request_cpu_before;
    json reply = {{"ok", true}, {"samples", samples}, {"audited", audited}, {"continued", continued},
                  {"request_cpu_s", request_cpu_s},
                  {"minor_faults", timed_faults},
                  {"access_policy", session_->access_policy_in_force()},
                  {"library_precision", take_library_precision()},
                  {"fp_control", floating_point_mode()},  // Note [floating-point environment]
                  {"fp_sampled", {{"taken", fp_sampled.taken}, {"modes", fp_sampled.modes}, {"armed_windows", fp_sampled.armed_windows}}},
                  {"timers", armed_timers()},             // Note [armed timers]
                  {"state", read_worker_state(host_pair_, session_->host_input_ranges())},  // Note [worker state]
                  {"cpu", {{"wall_s", timed_wall_s}, {"other_threads_cpu_s", others_cpu_s},
                           {"busy_other_threads", busy_other_threads}, {"process_cpu_s", process_cpu_s},
                           {"before_window_cpu_s", before_window_cpu_s}, {"child_helpers_cpu_s", child_helpers_cpu_s},
                           {"busy_child_threads", busy_child_threads}}}};
    if (auto recorded = session_->take_recorded(); !recorded.empty()) reply["recorded"] = std::move(recorded);  // Note [recorded metrics]
    if (plan.one_call) reply["empty_window_s"] = session_->empty_window_s();  // Note [batch reuse]
    if (recorder_ != nullptr) recorder_->record_activity(true);  // untimed phases stay in the trace
    if (audited) {
      json audits = json::array();
      for (const auto& audit : recorder_->audit_closed_windows()) audits.push_back(to_json(audit));
      reply["audits"] = std::move(audits);
    }
    return reply;
  }

  static json fingerprint_to_json(const timed_call_fingerprint& fingerprint) {
    json matches = json::object();
    for (const auto& [name, listed] : fingerprint.pattern_matches) {
      json rows = json::array();
      for (const auto& m : listed) rows.push_back({m.index, m.value ? json(*m.value) : json(nullptr)});
      matches[name] = std::move(rows);
    }
    return {{"index", fingerprint.sample_index}, {"input_seed", fingerprint.input_seed}, {"unwritten", fingerprint.unwritten},
            {"pattern_matches", matches}, {"positions_seed", fingerprint.positions_seed},
            {"probe_values", values_to_json(fingerprint.probe_values)}};
  }

  // JSON has no NaN: a NaN value travels as null.
  static json values_to_json(const output_values& values) {
    json out = json::object();
    for (const auto& [name, list] : values) {
      json row = json::array();
      for (double v : list) row.push_back(std::isnan(v) ? json(nullptr) : json(v));
      out[name] = std::move(row);
    }
    return out;
  }

  json truth(const json& request) {
    std::map<std::string, std::vector<std::size_t>> extra;
    const json listed = request.value("extra", json::object());  // items() of a temporary would dangle
    for (const auto& [name, indices] : listed.items()) {
      extra[name] = indices.get<std::vector<std::size_t>>();
    }
    if (recorder_ != nullptr) recorder_->record_activity(false);  // timed as a sample is, no audit window
    const auto [at_positions, at_extra] =
        session_->truth(request.at("input_seed").get<std::uint64_t>(), request.at("positions_seed").get<std::uint64_t>(),
                        request.at("count").get<std::size_t>(), extra, request.value("fresh_inputs", false));
    if (recorder_ != nullptr) recorder_->record_activity(true);  // untimed phases stay in the trace
    return {{"ok", true}, {"values", values_to_json(at_positions)}, {"extra", values_to_json(at_extra)},
            {"call_s", session_->truth_call_s()}};
  }

  json write_timeline(const std::string& path) {
    AISP_EXPECTS(recorder_ != nullptr, "no timeline: the audit is off in this worker");
    std::ofstream file(path);
    file << timeline_to_json(recorder_->take_timeline()).dump();
    AISP_EXPECTS(file.good(), "could not write " + path);
    return {{"ok", true}, {"file", path}};
  }

  json init(const json& request) {
    const auto target = request.at("target").get<std::string>();
    load_plugins(request.value("plugins", std::vector<std::string>{}));  // sandboxed already (Note [plugins])
    const pair* declared = registry::instance().find(target);
    AISP_EXPECTS(declared != nullptr, "unknown target " + target);
    const auto mode = parse_timing_mode(request.at("mode").get<std::string>());
    AISP_EXPECTS(mode.has_value(), "unknown timing mode");
    session_options options;
    options.mode = *mode;
    options.seed = request.at("seed").get<std::uint64_t>();
    options.read_flush = request.value("l2_flush", std::string("read")) == "read";
    options.launch_gate = request.value("launch_gate", false);
    const int device = request.value("device", 0);
    // CUPTI goes first: it must be enabled before this process creates its CUDA context.
    std::string audit = "off";
    std::string unified_memory = "off";
    if (declared->where() == backend::cuda && request.value("audit", false)) {
      std::string why;
      recorder_ = cupti_recorder::start(static_cast<std::uint32_t>(device), request.value("trace", false), why);
      audit = recorder_ != nullptr ? "on" : "unavailable: " + why;
      options.observer = recorder_.get();
    }
    if (declared->where() == backend::cuda) AISP_CUDA_CHECK(cudaSetDevice(device));
    // Note [ranks]: this worker is one rank of a multi-GPU pair; its communicator joins the
    // others' (ncclCommInitRank waits for every rank), before any pair code runs.
    options.rank = request.value("rank", 0);
    options.world_size = request.value("world_size", 1);
    AISP_EXPECTS(options.world_size == declared->gpus(),
                 fmt::format("{} declares world size {}, the judge started {} ranks", target, declared->gpus(), options.world_size));
    if (request.contains("nccl_id")) {
      communicator_ = std::make_unique<rank_communicator>(request.at("nccl_id").get<std::string>(), options.world_size, options.rank);
      options.communicator = communicator_->get();
    }
    // C10: migrations are counted only where the pair declares managed memory (elsewhere any
    // managed allocation already fails); the counters slow every managed and pinned copy.
    if (recorder_ != nullptr && declared->allows_managed_memory()) {
      AISP_CUDA_CHECK(cudaFree(nullptr));  // the context, which the unified-memory counters need
      recorder_->start_unified_memory_counters();
      unified_memory = recorder_->unified_memory_state();
    } else if (recorder_ != nullptr) {
      unified_memory = "off: the pair declares no managed memory, so any managed allocation fails";
    }
    // Note [warm heap]: a host pair's temporaries reuse touched pages, not the harness's growth.
    if (declared->where() == backend::host) (void)warm_host_heap();
    host_pair_ = declared->where() == backend::host;
    sampled_fp_mode_ = host_pair_ && !is_exec_pair(declared->target());  // Note [sampled fp mode]: the worker computes there
    session_ = std::make_unique<variant_session>(
        *declared, declared->find_variant(request.at("variant").get<std::string>()), options);
    return {{"ok", true}, {"protocol", protocol::version}, {"pid", static_cast<long>(getpid())}, {"audit", audit}, {"sandbox", sandboxed_.state},
            {"threads_at_start", sandboxed_.threads_at_start}, {"stray_channel_copies", sandboxed_.stray_channel_copies},
            {"interposed_clocks", interposed_clocks()}, {"unified_memory_counters", unified_memory},
            {"state", read_worker_state(host_pair_)}};  // Note [worker state]: before any variant code but the pair file's
  }

  sandbox_state sandboxed_;
  bool sampled_fp_mode_ = false;
  bool host_pair_ = false;  // Note [shared state]: judged on host pairs, so read there only
  reply_channel& replies_;  // a verified sample's record goes out at once (Note [verified after the call])
  std::unique_ptr<cupti_recorder> recorder_;  // declared first: outlives the session it observes
  std::unique_ptr<rank_communicator> communicator_;  // outlives the session that uses it
  std::unique_ptr<variant_session> session_;
};

}  // namespace

int run_worker() {
  // Threads before main() are a pair file's static initializer's: CUDA has not started yet.
  const std::size_t threads_at_start = take_process_snapshot().threads;
  reply_channel replies;
  // Note [compilers in the sandbox]: the judge says so for a pair that allowed processes; their
  // orphans are re-parented here, so the child-process check sees every one of them.
  const char* may_spawn = std::getenv(std::string(sandbox::worker_subprocess_variable).c_str());
  const bool allow_exec = may_spawn != nullptr && std::string_view(may_spawn) == "1";
  if (allow_exec) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  count_continues();  // Note [stopped workers]; before the sandbox, which owns the signal handlers after it
  start_fp_mode_sampler();  // Note [sampled fp mode]: this thread serves every request
  const std::string unconfined = sandbox::confine_worker(replies.fd(), allow_exec);
  worker state(sandbox_state{unconfined.empty() ? "on" : "unavailable: " + unconfined, threads_at_start, replies.stray_copies()},
               replies);
  std::string line;
  // Note [worker CPU time]: the wait between requests costs the worker and its child processes
  // (an executable pair's variant) nothing. The children's /proc walk stays outside the wait:
  // before the process clock's reading that opens it, after the one that closes it (a torch
  // pair's dozens of threads made each walk cost enough to fail the wait, CI 2026-12-03).
  const auto opening = [] {
    const double children = children_cpu_s();
    return std::pair{take_cpu_reading(), children};
  };
  const auto closing = [] {
    const cpu_reading process = take_cpu_reading();
    return std::pair{process, children_cpu_s()};
  };
  auto last_answer = opening();
  while (std::getline(std::cin, line)) {
    json request;
    try {
      const auto started = closing();
      request = json::parse(line);
      if (request.at("op") == "exit") {
        replies.send({{"ok", true}});
        return 0;
      }
      json reply = state.handle(request);
      // Note [worker CPU time]: what this sample request and the wait before it cost in CPU.
      if (reply.contains("cpu")) {
        reply["cpu"]["idle_wall_s"] = started.first.wall_s - last_answer.first.wall_s;
        reply["cpu"]["idle_cpu_s"] =
            started.first.process_cpu_s - last_answer.first.process_cpu_s + started.second - last_answer.second;
      }
      replies.send(std::move(reply));
      last_answer = opening();
    } catch (const unsupported_mode& error) {
      replies.send({{"ok", false}, {"kind", "unsupported"}, {"message", error.what()}});
    } catch (const cuda_error& error) {
      // A CUDA fault leaves the context unusable: report it and end the worker.
      replies.send({{"ok", false}, {"kind", "cuda"}, {"message", error.what()}});
      return 3;
    } catch (const contract_error& error) {
      replies.send({{"ok", false}, {"kind", "contract"}, {"message", error.what()}});
    } catch (const std::exception& error) {
      replies.send({{"ok", false}, {"kind", "exception"}, {"message", error.what()}});
    }
  }
  return 0;
}

}  // namespace aisp
