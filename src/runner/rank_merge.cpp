#include "runner/rank_merge.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "aisp/check.hpp"

namespace aisp::ranks {
namespace {

void add_unique(json& list, const json& more) {
  for (const auto& item : more) {
    if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
  }
}

double number(const json& j, const char* key) { return j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : 0.0; }

// A rank's listed pattern matches at the judge's indices (rank-major).
json shifted_matches(const json& by_output, const output_counts& counts, std::size_t rank) {
  json matches = json::object();
  for (const auto& [name, rows] : by_output.items()) {
    const auto found = counts.find(name);
    AISP_EXPECTS(found != counts.end(), "a rank listed matches of an unknown output " + name);
    matches[name] = json::array();
    for (const auto& row : rows) matches[name].push_back({row[0].get<std::size_t>() + rank * found->second, row[1]});
  }
  return matches;
}

// Which samples a rank verified, and where it probed them: ranks that drew apart differ in both.
std::vector<std::pair<int, std::uint64_t>> verified_calls(const json& reply) {
  std::vector<std::pair<int, std::uint64_t>> calls;
  for (const auto& f : reply.value("verified", json::array()))
    calls.emplace_back(f.at("index").get<int>(), f.value("positions_seed", std::uint64_t{0}));
  return calls;
}

// Note [verified after the call]: ranks with a communicator verify the same samples (their draws
// agree): each such sample's counts add up, its listed matches move to the rank's place, and its
// probes join rank by rank, as concatenate_values joins the truths. Ranks without one (a host
// pair's) draw apart: each rank's verified sample stays its own, marked with its rank, and is
// judged against that rank's share of the truth.
json merge_verified(const std::vector<json>& replies, const output_counts& counts) {
  json merged = json::array();
  const auto first = verified_calls(replies.front());
  const bool agreed = std::all_of(replies.begin(), replies.end(), [&](const json& r) { return verified_calls(r) == first; });
  if (!agreed) {
    for (std::size_t r = 0; r < replies.size(); ++r) {
      const json listed = replies[r].value("verified", json::array());  // none: the worker sent no verified record
      for (std::size_t v = 0; v < listed.size(); ++v) {
        json fingerprint = listed[v];
        fingerprint["rank"] = r;
        fingerprint["pattern_matches"] = shifted_matches(fingerprint.at("pattern_matches"), counts, r);
        merged.push_back(std::move(fingerprint));
      }
    }
    return merged;
  }
  for (std::size_t v = 0; v < first.size(); ++v) {
    json fingerprint = replies.front().at("verified").at(v);
    json unwritten = json::object();
    json matches = json::object();
    std::vector<json> probes;
    for (std::size_t r = 0; r < replies.size(); ++r) {
      const json& part = replies[r].at("verified").at(v);
      for (const auto& [name, count] : part.at("unwritten").items()) unwritten[name] = unwritten.value(name, std::size_t{0}) + count.get<std::size_t>();
      const json shifted = shifted_matches(part.at("pattern_matches"), counts, r);  // items() of a temporary would dangle
      for (const auto& [name, rows] : shifted.items()) {
        if (!matches.contains(name)) matches[name] = json::array();
        for (const auto& row : rows) matches[name].push_back(row);
      }
      probes.push_back(part.at("probe_values"));
    }
    fingerprint["unwritten"] = std::move(unwritten);
    fingerprint["pattern_matches"] = std::move(matches);
    fingerprint["probe_values"] = concatenate_values(probes);
    merged.push_back(std::move(fingerprint));
  }
  return merged;
}

}  // namespace

rank_index locate(std::size_t global, std::size_t per_rank) {
  AISP_EXPECTS(per_rank > 0, "a buffer of no elements has no ranks");
  return {static_cast<int>(global / per_rank), global % per_rank};
}

json merge_init(const std::vector<json>& replies) {
  AISP_EXPECTS(!replies.empty(), "no ranks answered");
  json merged = replies.front();
  for (const auto& r : replies) {
    if (r.value("audit", "off") != "on") merged["audit"] = r.value("audit", "off");
    if (r.value("sandbox", "on") != "on") merged["sandbox"] = r.value("sandbox", "off");
  }
  merged["ranks"] = static_cast<int>(replies.size());
  return merged;
}

json merge_load(const std::vector<json>& replies) {
  AISP_EXPECTS(!replies.empty(), "no ranks answered");
  json merged = replies.front();
  json& load = merged["load"];
  for (std::size_t r = 1; r < replies.size(); ++r) {
    const json& other = replies[r].at("load");
    for (const char* key : {"setup_s", "warmup_s", "estimated_call_s"}) load[key] = std::max(number(load, key), number(other, key));
    for (const char* key : {"calls_per_sample", "warmup_calls"})
      load[key] = std::max(load.value(key, 1), other.value(key, 1));
    for (const char* key : {"buffer_bytes", "setup_wrote_outputs", "setup_subnormal_inputs"})
      load[key] = load.value(key, std::size_t{0}) + other.value(key, std::size_t{0});
    add_unique(load["setup_mutated_inputs"], other.value("setup_mutated_inputs", json::array()));
    add_unique(load["library_precision"], other.value("library_precision", json::array()));
    if (load.value("access_policy", std::string()).empty()) load["access_policy"] = other.value("access_policy", std::string());
  }
  return merged;
}

// D7: each rank's device-busy time in audited sample i, over the slowest rank's window: a
// pipeline stage that waits on its neighbours (a bubble) shows as a rank busy far less than 1.
json ranks_busy(const std::vector<json>& replies, std::size_t i, std::size_t slowest) {
  const auto audit_of = [&](const json& reply) {
    const json none = json::object();
    return reply.contains("audits") && i < reply["audits"].size() ? reply["audits"][i] : none;
  };
  const double window = std::max(number(audit_of(replies[slowest]), "window_s"), 1e-12);
  json busy = json::array();
  for (const auto& r : replies) {
    const json a = audit_of(r);
    busy.push_back(std::min(1.0, number(a, "busy_fraction") * number(a, "window_s") / window));
  }
  return busy;
}

json merge_sample(const std::vector<json>& replies, const output_counts& counts) {
  AISP_EXPECTS(!replies.empty(), "no ranks answered");
  json merged = replies.front();
  const std::size_t samples = merged.at("samples").size();
  for (const auto& r : replies) {
    AISP_EXPECTS(r.at("samples").size() == samples, "the ranks took different numbers of samples");
  }
  const bool audited = merged.contains("audits");
  for (std::size_t i = 0; i < samples; ++i) {
    std::size_t slowest = 0;
    for (std::size_t r = 1; r < replies.size(); ++r) {
      if (number(replies[r]["samples"][i], "t") > number(replies[slowest]["samples"][i], "t")) slowest = r;
    }
    json sample = replies[slowest]["samples"][i];
    json ranks_t = json::array();
    for (const auto& r : replies) ranks_t.push_back(number(r["samples"][i], "t"));
    sample["ranks_t"] = std::move(ranks_t);  // for the rank-skew check (D4)
    if (audited) sample["ranks_busy"] = ranks_busy(replies, i, slowest);  // per-stage timelines (D7)
    for (const auto& r : replies) {
      sample["wall"] = std::max(number(sample, "wall"), number(r["samples"][i], "wall"));
      sample["cost"] = std::max(number(sample, "cost"), number(r["samples"][i], "cost"));
      sample["mhz"] = std::min(number(sample, "mhz"), number(r["samples"][i], "mhz"));
    }
    merged["samples"][i] = std::move(sample);
    if (audited && replies[slowest].contains("audits") && i < replies[slowest]["audits"].size()) {
      merged["audits"][i] = replies[slowest]["audits"][i];
      // K6 per rank: ranks autotune on their own GPUs and may settle on different kernels.
      json launches = json::array();
      for (const auto& r : replies)
        launches.push_back(r.contains("audits") && i < r["audits"].size() ? r["audits"][i].value("kernel_launches", json::object()) : json::object());
      merged["audits"][i]["rank_kernel_launches"] = std::move(launches);
    }
  }
  long long faults = 0;
  double request_cpu_s = 0;  // Note [contended visits]: every rank's process is the variant's
  // Note [worker CPU time] per rank: the rank whose other threads used the largest share of its
  // timed spans, and the one that used the most CPU while waiting; a helper on one rank shows.
  const auto share = [](const json& cpu, const char* used, const char* wall) {
    return number(cpu, used) / std::max(number(cpu, wall), 1e-9);
  };
  // Note [host idle] per rank: the smallest share of its timed spans a rank spent on a CPU, set
  // against the spans kept; a rank that sleeps shows.
  json cpu = merged.value("cpu", json::object());
  double least_busy_share = std::numeric_limits<double>::infinity();
  for (const auto& r : replies) {
    faults += r.value("minor_faults", 0LL);
    request_cpu_s += r.value("request_cpu_s", 0.0);
    const json other = r.value("cpu", json::object());
    if (share(other, "other_threads_cpu_s", "wall_s") > share(cpu, "other_threads_cpu_s", "wall_s")) {
      cpu["wall_s"] = number(other, "wall_s");
      cpu["other_threads_cpu_s"] = number(other, "other_threads_cpu_s");
    }
    cpu["busy_other_threads"] = std::max(cpu.value("busy_other_threads", 0), other.value("busy_other_threads", 0));
    cpu["busy_child_threads"] = std::max(cpu.value("busy_child_threads", 0), other.value("busy_child_threads", 0));
    if (number(other, "wall_s") > 0) least_busy_share = std::min(least_busy_share, share(other, "process_cpu_s", "wall_s"));
    if (share(other, "idle_cpu_s", "idle_wall_s") > share(cpu, "idle_cpu_s", "idle_wall_s")) {
      cpu["idle_wall_s"] = number(other, "idle_wall_s");
      cpu["idle_cpu_s"] = number(other, "idle_cpu_s");
    }
    add_unique(merged["library_precision"], r.value("library_precision", json::array()));
    if (merged.value("access_policy", std::string()).empty()) merged["access_policy"] = r.value("access_policy", std::string());
  }
  merged["minor_faults"] = faults;
  merged["request_cpu_s"] = request_cpu_s;
  if (number(cpu, "wall_s") > 0) cpu["process_cpu_s"] = least_busy_share * number(cpu, "wall_s");
  if (merged.contains("cpu")) merged["cpu"] = std::move(cpu);
  merged["verified"] = merge_verified(replies, counts);
  return merged;
}

json concatenate_values(const std::vector<json>& per_rank_values) {
  json merged = json::object();
  for (const auto& values : per_rank_values) {
    for (const auto& [name, list] : values.items()) {
      if (!merged.contains(name)) merged[name] = json::array();
      for (const auto& v : list) merged[name].push_back(v);
    }
  }
  return merged;
}

json merge_call_report(const std::vector<json>& replies) {
  AISP_EXPECTS(!replies.empty(), "no ranks answered");
  json merged = replies.front();
  json& after = merged["after"];
  const json& before = merged.at("before");
  for (std::size_t r = 1; r < replies.size(); ++r) {
    const json& other = replies[r];
    add_unique(merged["mutated_inputs"], other.value("mutated_inputs", json::array()));
    add_unique(merged["late_outputs"], other.value("late_outputs", json::array()));
    merged["subnormal_inputs"] = merged.value("subnormal_inputs", std::size_t{0}) + other.value("subnormal_inputs", std::size_t{0});
    merged["helper_cpu_after_return_s"] = std::max(number(merged, "helper_cpu_after_return_s"), number(other, "helper_cpu_after_return_s"));
    for (const char* key : {"launch_error", "allocation_caller"}) {
      if (merged.value(key, std::string()).empty()) merged[key] = other.value(key, std::string());
    }
    // The probes as rank 0 took them, with each counter's largest change on any rank.
    const json& other_before = other.at("before");
    const json& other_after = other.at("after");
    for (const char* key : {"threads", "allocations", "c_allocations", "mappings", "stdout_bytes", "minor_faults"}) {
      const long long delta = other_after.value(key, 0LL) - other_before.value(key, 0LL);
      if (delta > after.value(key, 0LL) - before.value(key, 0LL)) after[key] = before.value(key, 0LL) + delta;
    }
    for (const char* key : {"environment_hash", "affinity_hash", "scheduler", "priority"}) {
      if (other_after.value(key, json()) != other_before.value(key, json()) && after.value(key, json()) == before.value(key, json()))
        after[key] = other_after.value(key, json());
    }
    if (other.value("initial_scheduler", 0) != other_after.value("scheduler", 0)) merged["initial_scheduler"] = other.value("initial_scheduler", 0);
    if (other.value("initial_affinity_hash", json()) != other_after.value("affinity_hash", json()))
      merged["initial_affinity_hash"] = other.value("initial_affinity_hash", json());
  }
  return merged;
}

json merge_traffic(const std::vector<json>& replies) {
  AISP_EXPECTS(!replies.empty(), "no ranks answered");
  json merged = replies.front();
  for (std::size_t r = 1; r < replies.size(); ++r) {
    const json& other = replies[r];
    if (other.contains("unavailable")) return other;
    if (merged.contains("unavailable")) return merged;
    for (const char* key : {"l2_read_bytes", "l2_write_bytes", "dram_read_bytes", "dram_write_bytes"})
      merged[key] = number(merged, key) + number(other, key);
  }
  return merged;
}

split_extra split_extra_indices(const json& extra, const output_counts& counts, int world) {
  split_extra split;
  split.per_rank.assign(static_cast<std::size_t>(world), json::object());
  split.order = json::object();
  for (const auto& [name, indices] : extra.items()) {
    const auto found = counts.find(name);
    AISP_EXPECTS(found != counts.end(), "truth asked for unknown output " + name);
    json ranks_asked = json::array();
    for (auto& per_rank : split.per_rank) per_rank[name] = json::array();
    for (const auto& global : indices) {
      const auto at = locate(global.get<std::size_t>(), found->second);
      AISP_EXPECTS(at.rank < world, "truth index out of range");
      split.per_rank[static_cast<std::size_t>(at.rank)][name].push_back(at.index);
      ranks_asked.push_back(at.rank);
    }
    split.order[name] = std::move(ranks_asked);
  }
  return split;
}

json join_extra_values(const std::vector<json>& per_rank_extra, const json& order) {
  json joined = json::object();
  for (const auto& [name, ranks_asked] : order.items()) {
    std::vector<std::size_t> next(per_rank_extra.size(), 0);
    json values = json::array();
    for (const auto& rank : ranks_asked) {
      const auto r = rank.get<std::size_t>();
      values.push_back(per_rank_extra.at(r).at(name).at(next[r]++));
    }
    joined[name] = std::move(values);
  }
  return joined;
}

}  // namespace aisp::ranks
