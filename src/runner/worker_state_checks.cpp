#include "runner/worker_state_checks.hpp"

#include <algorithm>
#include <map>
#include <string>

#include <fmt/format.h>

#include "harness/plugin_loader.hpp"
#include "runner/judge_checks.hpp"
#include "verify/battery.hpp"

namespace aisp {

// Note [worker state]
// Some of what makes the same code fast is process-wide state a variant can set from its own
// worker. A red team's baseline called mallopt(M_MMAP_THRESHOLD, 64 KiB) in its setup(), so each
// 2 MiB temporary of its torch code became a fresh mapping faulted in on every call (1,026
// faults a call, which M6 does not judge for Python pairs): 3.4x for the same code. Another
// turned torch.backends.mkldnn.enabled off in the baseline's setup(): PyTorch's native
// convolution instead of oneDNN, 13.5x for the same F.conv2d (round six, 2026-12-04). The worker
// reads such settings at start (after the pair file's own code, which every variant shares),
// after setup() and after every visit (harness/worker_state.hpp; the Python bridge adds
// torch's). A baseline or its twin that moved one toward slower code fails, and so does a
// candidate that moved one toward less precise math without declaring a precision change (W2:
// TF32 matmuls, a lower float32_matmul_precision).
namespace {

// slower: a baseline's move fails; less_precise: a candidate's without a declared precision
// change; moved: a baseline's move either way (interpreter-wide settings every variant should
// run under alike; a candidate's are not judged yet: whether torch.compile's own machinery moves
// the collector's settings has not been read on a device).
// counted: a baseline's count of settings toward slower code, inside calls too (Note [watched
// python state]): judged as `moved` unless the pair declared why (switches_in_calls).
// lowered / raised: a baseline's number (or any element of its list) below / above its reading
// at start; a gc threshold of 0 turns automatic collection off, which is not slower.
enum class direction { slower, less_precise, moved, counted, lowered, raised, any_variant };

// Whether `now` moved from `at_start` the way `way` judges (lowered, raised).
bool moved_past(const nlohmann::json& at_start, const nlohmann::json& now, direction way) {
  if (at_start.is_number() && now.is_number())
    return way == direction::lowered ? now.get<double>() < at_start.get<double>() : now.get<double>() > at_start.get<double>();
  if (!at_start.is_array() || !now.is_array() || at_start.size() != now.size() || now.empty()) return false;
  if (way == direction::lowered && now[0].is_number() && now[0].get<double>() == 0) return false;
  for (std::size_t i = 0; i < now.size(); ++i)
    if (moved_past(at_start[i], now[i], way)) return true;
  return false;
}

struct setting {
  const char* probe;
  const char* key;
  nlohmann::json moved_to;  // the value the change reaches
  direction way;
  const char* what;
};

const setting settings[] = {
    {"allocator", "megabyte_block_mapped", true, direction::slower,
     "glibc's mmap threshold was lowered (mallopt M_MMAP_THRESHOLD): each large temporary is a fresh mapping faulted in on "
     "every call"},
    {"allocator", "large_block_mapped", true, direction::slower,
     "glibc's mmap threshold was lowered (mallopt M_MMAP_THRESHOLD) under the harness's 32 MiB: each temporary above it is a "
     "fresh mapping faulted in on every call"},
    {"allocator", "allocations_perturbed", true, direction::slower,
     "glibc fills every block it hands out and takes back (mallopt M_PERTURB): each allocation became a memset"},
    {"allocator", "heap_trimmed_on_free", true, direction::slower,
     "glibc's trim threshold was lowered (mallopt M_TRIM_THRESHOLD): the heap's top goes back to the system on each free and "
     "its pages fault in again"},
    {"torch", "mkldnn_enabled", false, direction::slower, "torch.backends.mkldnn.enabled was turned off (no oneDNN kernels)"},
    {"torch", "cudnn_enabled", false, direction::slower, "torch.backends.cudnn.enabled was turned off (no cuDNN kernels)"},
    {"torch", "deterministic_algorithms", true, direction::slower, "torch.use_deterministic_algorithms was turned on"},
    {"torch", "cudnn_deterministic", true, direction::slower, "torch.backends.cudnn.deterministic was turned on"},
    {"torch", "matmul_allow_tf32", true, direction::less_precise, "torch.backends.cuda.matmul.allow_tf32 was turned on"},
    {"torch", "cudnn_allow_tf32", true, direction::less_precise, "torch.backends.cudnn.allow_tf32 was turned on"},
    {"torch", "float32_matmul_precision_lowered", true, direction::less_precise,
     "torch.set_float32_matmul_precision lowered float32 matmuls' precision"},
    {"buffers", "inputs_write_protected", true, direction::any_variant,
     "its inputs' pages were left without write access (Note [protected inputs]): the harness's fill of fresh inputs ran "
     "the variant's own fault handler, untimed"},
    // Only moves toward slower code: a baseline that disables the collector or raises its
    // thresholds for steadier timings (as timeit does) only makes its own rival's case harder.
    {"python", "gc_threshold", nullptr, direction::lowered, "the garbage collector's thresholds were lowered (gc.set_threshold)"},
    {"python", "gc_enabled", true, direction::slower, "the garbage collector was turned on (gc.enable)"},
    {"python", "gc_callbacks", nullptr, direction::raised, "callbacks were added to gc.callbacks"},
    {"python", "profile_hook", true, direction::slower, "an interpreter-wide profile hook was set (sys.setprofile)"},
    {"python", "trace_hook", true, direction::slower, "an interpreter-wide trace hook was set (sys.settrace)"},
    {"python", "threading_profile_hook", true, direction::slower, "threading.setprofile was called"},
    {"python", "threading_trace_hook", true, direction::slower, "threading.settrace was called"},
    // Note [C-level hooks] (python/aisp/_bridge.py): a hook set from C with no object, which
    // sys.getprofile() and sys.gettrace() read as None.
    {"python", "c_profile_hook", true, direction::slower, "a profile function was set from C (PyEval_SetProfile) on a thread of the worker"},
    {"python", "c_trace_hook", true, direction::slower, "a trace function was set from C (PyEval_SetTrace) on a thread of the worker"},
    {"python", "tracemalloc", true, direction::slower, "tracemalloc was started: every allocation records its traceback"},
    {"python", "monitoring_events_0", nullptr, direction::raised, "sys.monitoring events were turned on (tool 0, the debugger's)"},
    {"python", "monitoring_events_1", nullptr, direction::raised, "sys.monitoring events were turned on (tool 1, coverage's)"},
    {"python", "monitoring_events_2", nullptr, direction::raised, "sys.monitoring events were turned on (tool 2, the profiler's)"},
    {"python", "monitoring_events_3", nullptr, direction::raised, "sys.monitoring events were turned on (tool 3)"},
    {"python", "monitoring_events_4", nullptr, direction::raised, "sys.monitoring events were turned on (tool 4)"},
    {"python", "monitoring_events_5", nullptr, direction::raised, "sys.monitoring events were turned on (tool 5, the optimizer's)"},
    {"torch", "mkldnn_turned_off", nullptr, direction::counted, "torch.backends.mkldnn was turned off (times counted)"},
    {"torch", "cudnn_turned_off", nullptr, direction::counted, "torch.backends.cudnn was turned off (times counted)"},
    {"torch", "cudnn_deterministic_turned_on", nullptr, direction::counted, "torch.backends.cudnn.deterministic was turned on (times counted)"},
    {"torch", "deterministic_algorithms_turned_on", nullptr, direction::counted,
     "torch.use_deterministic_algorithms was turned on (times counted)"},
    {"torch", "profiler_enabled", true, direction::slower, "torch's autograd profiler was started and left on"},
    {"torch", "anomaly_detection", true, direction::slower, "torch's anomaly detection was turned on (torch.autograd.set_detect_anomaly)"},
    {"torch", "default_dtype", nullptr, direction::moved, "torch's default dtype was changed (torch.set_default_dtype)"},
    // Note [replaced kernels] (python/aisp/_bridge.py)
    {"torch", "kernels_replaced", nullptr, direction::raised,
     "a kernel of torch's own was replaced for a backend (torch.library: an aten op's CPU or CUDA kernel registered from Python)"},
    {"torch", "function_modes", nullptr, direction::raised,
     "a torch function mode was entered and left on (TorchFunctionMode): every torch call goes through Python"},
    {"torch", "dispatch_modes", nullptr, direction::raised,
     "a torch dispatch mode was entered and left on (TorchDispatchMode): every operator goes through Python"},
    {"torch", "rebound_functions", nullptr, direction::moved,
     "torch's own functions were replaced (an assignment to a torch, torch.nn.functional or torch.Tensor attribute, or an "
     "nn.Module's forward)"},
};

const nlohmann::json* value_at(const nlohmann::json& state, const setting& s) {
  if (!state.is_object() || !state.contains(s.probe) || !state[s.probe].is_object() || !state[s.probe].contains(s.key)) return nullptr;
  return &state[s.probe][s.key];
}

}  // namespace

namespace {

// Every shared writable file a slot's worker held after setup() or a visit: id, path.
std::map<std::string, std::string> shared_files_of(const variant_slot& slot) {
  std::map<std::string, std::string> files;
  for (const auto& state : slot.worker_states) {
    for (const auto& file : state.value("shared_files", nlohmann::json::array()))
      files[file.value("id", "")] = file.value("path", "");
  }
  return files;
}

// Note [shared state]
// Every variant runs in a worker of its own, but the workers of a pair are one user's processes on
// one machine: a red team's candidate and baseline (the same plugin) mapped one /dev/shm table;
// the candidate computed a quarter of a matmul at the benchmark size and wrote the inputs it had
// answered there, and the baseline, honest in its own calls, wrote the candidate's answer over
// its own when the judge asked it for the truth on those inputs. Its answers being the only
// truth at the benchmark size, baseline-match, timed-call and accuracy agreed with the wrong
// answer: 8.2x "faster" (round seven, 2026-12-04). Each worker now reports the files it holds
// that another process could read while it writes them (shared writable mappings, descriptors
// open for writing); a file held so by a candidate's worker and by the baseline's or its twin's
// fails both. A channel the workers open and close inside their calls is not seen. Host pairs
// only so far: which files the CUDA driver and NCCL hold shared in every worker of a GPU pair has
// not been read on a device yet, and a check that fails every GPU pair would be worse than none.
void check_shared_files(const std::vector<variant_slot>& slots, std::vector<check_result>& checks) {
  for (const auto& candidate : slots) {
    if (candidate.role != slot_role::candidate) continue;
    const auto held = shared_files_of(candidate);
    for (const auto& other : slots) {
      if (other.role == slot_role::candidate) continue;
      for (const auto& [id, path] : shared_files_of(other)) {
        if (!held.contains(id)) continue;
        for (const auto* slot : {&candidate, &other})
          add_check(checks, verify::checks::shared_state, slot->label, false,
                    fmt::format("{} and {} both held {} open for writing after setup() or a visit: the workers of a pair share "
                                "no state",
                                candidate.label, other.label, path));
        break;
      }
    }
  }
}

// The variables libraries read to choose how fast to run (an instruction set, a thread pool, an
// allocator, a math mode): a baseline never changes one, whatever the candidates do, since a
// setting both run under can still be chosen to slow only the baseline's kind of code (both
// without vector instructions, beside a candidate that never needed them).
bool performance_knob(std::string_view name) {
  for (const std::string_view prefix : {"ATEN_", "DNNL_", "ONEDNN_", "MKL", "NPY_", "OMP_", "KMP_", "GOMP_", "OPENBLAS_", "BLIS_",
                                        "MALLOC_", "GLIBC_TUNABLES", "LD_", "NVIDIA_TF32_OVERRIDE", "CUBLAS", "CUDNN_",
                                        "CUDA_LAUNCH_BLOCKING", "PYTORCH_", "TORCH_"})
    if (name.starts_with(prefix)) return true;
  return false;
}

// Note [worker environment] (harness/worker_environment.cpp): the variables a baseline's worker
// (`own`) or its child programs (`programs`) ran under, changed from the worker's start, that
// not every candidate also ended under with the same value (a program's by name only: a child
// of a compiler's pool may carry its own parent's numbers), and any performance knob it changed.
// Others every candidate shares are a library's own (torch sets CUDA_MODULE_LOADING as CUDA
// starts, in every worker).
void check_environment(const std::vector<variant_slot>& slots, std::vector<check_result>& checks) {
  const auto ended_under = [&](const char* whose, const std::string& name, const nlohmann::json& value) {
    if (performance_knob(name)) return false;
    const bool by_value = std::string_view(whose) == "own";
    bool any = false;
    for (const auto& slot : slots) {
      if (slot.role != slot_role::candidate) continue;
      const auto& last = slot.last_worker_state;
      if (!last.is_object() || !last.contains("environment") || !last["environment"].contains(whose) ||
          !last["environment"][whose].contains(name) || (by_value && last["environment"][whose][name] != value))
        return false;
      any = true;
    }
    return any;
  };
  for (const auto& slot : slots) {
    if (slot.role == slot_role::candidate) continue;
    for (const char* whose : {"own", "programs"}) {
      std::map<std::string, std::string> offending;
      for (const auto& state : slot.worker_states) {
        if (!state.contains("environment") || !state["environment"].contains(whose)) continue;
        for (const auto& [name, value] : state["environment"][whose].items())
          if (!ended_under(whose, name, value)) offending[name] = value.is_string() ? value.get<std::string>() : "(unset)";
      }
      if (offending.empty()) continue;
      std::string listed;
      for (const auto& [name, value] : offending) listed += fmt::format("{}{}={}", listed.empty() ? "" : ", ", name, value);
      add_check(checks, verify::checks::worker_state, slot.label, false,
                fmt::format("its {} ran under environment variables changed from the worker's start (performance knobs, or ones no "
                            "candidate ran under): "
                            "{} (libraries read some once, at first use: the instruction set, thread pools; a baseline is what a "
                            "competent engineer writes first)",
                            std::string_view(whose) == "own" ? "worker" : "program", listed));
    }
  }
}

// Note [thread placement] (harness/thread_placement.cpp): any variant whose worker or program ran
// threads on other CPUs, under another scheduling policy or at a lower priority than the worker
// started with. Host pairs only: NCCL binds its threads to a GPU's CPUs by itself.
void check_thread_placement(const std::vector<variant_slot>& slots, std::vector<check_result>& checks) {
  for (const auto& slot : slots) {
    for (const auto& state : slot.worker_states) {
      const auto placement = state.value("placement", nlohmann::json::object());
      if (placement.value("apart", 0) == 0) continue;
      add_check(checks, verify::checks::scheduling_change, slot.label, false,
                fmt::format("{} threads of its worker or its program ran pinned apart from the worker's CPUs, under another "
                            "scheduling policy or at a lower priority, after setup() or a visit, {}: the judge places the "
                            "workers, and a variant's own pinning, policy or priority (sched_setaffinity, taskset, "
                            "OMP_PROC_BIND, sched_setscheduler, chrt, setpriority) is not measured",
                            placement.value("apart", 0), placement.value("example", std::string())));
      break;
    }
  }
}

// Note [library state] (harness/worker_state.cpp): a worker whose first reading found oneDNN has
// its instruction set fixed, so no later cap takes; where oneDNN was loaded only after it (torch
// imported inside setup()), nothing fixed it, and a baseline's below every candidate's fails.
void check_library_isa(const std::vector<variant_slot>& slots, std::vector<check_result>& checks) {
  const auto lowest = [](const variant_slot& slot) {
    int found = -1;
    for (const auto& state : slot.worker_states)
      if (const auto isa = state.value("libraries", nlohmann::json::object()).value("onednn_cpu_isa", -1); isa >= 0)
        found = found < 0 ? isa : std::min(found, isa);
    return found;
  };
  int candidates = -1;
  for (const auto& slot : slots)
    if (slot.role == slot_role::candidate) candidates = std::max(candidates, lowest(slot));
  for (const auto& slot : slots) {
    const int isa = slot.role == slot_role::candidate ? -1 : lowest(slot);
    if (isa >= 0 && candidates >= 0 && isa < candidates)
      add_check(checks, verify::checks::worker_state, slot.label, false,
                fmt::format("oneDNN's instruction set in its worker ({:#x}) is below the candidates' ({:#x}): capped with "
                            "dnnl_set_max_cpu_isa (Note [library state]); a baseline is what a competent engineer writes first",
                            isa, candidates));
  }
}

}  // namespace

namespace {

// Torch's JIT and dispatch settings (the Python bridge's "torch_settings", _bridge.py's
// _TORCH_SETTINGS): no direction is known, so a baseline (or its twin) that moved one from where
// its worker started fails, whatever it moved it to.
void check_torch_settings(const variant_slot& slot, std::vector<check_result>& checks) {
  const auto& started = slot.init_reply.value("state", nlohmann::json::object());
  if (!started.contains("torch_settings") || !started["torch_settings"].is_object()) return;
  std::map<std::string, std::string> moved;
  for (const auto& seen : slot.worker_states) {
    if (!seen.contains("torch_settings") || !seen["torch_settings"].is_object()) continue;
    for (const auto& [key, value] : seen["torch_settings"].items())
      if (started["torch_settings"].contains(key) && started["torch_settings"][key] != value && !moved.contains(key))
        moved[key] = fmt::format("{} (read {} at start, {} after)", key, started["torch_settings"][key].dump(), value.dump());
  }
  if (moved.empty()) return;
  std::string listed;
  for (const auto& [key, text] : moved) listed += (listed.empty() ? "" : ", ") + text;
  add_check(checks, verify::checks::worker_state, slot.label, false,
            fmt::format("torch settings were changed in its worker after setup() or a visit: {}: every variant runs under the "
                        "settings the worker started with (a baseline is what a competent engineer writes first)",
                        listed));
}

}  // namespace

void check_worker_state(const pair& declared, const std::vector<variant_slot>& slots, std::vector<check_result>& checks) {
  if (declared.where() == backend::host) check_shared_files(slots, checks);
  if (declared.where() == backend::host) check_thread_placement(slots, checks);
  check_library_isa(slots, checks);
  check_environment(slots, checks);
  const auto switches_why = switches_reason(declared);
  if (!switches_why.empty())
    add_check(checks, verify::checks::worker_state, "baseline", true,
              "torch's backend switches may be turned inside the calls, as the pair declares: " + switches_why);
  for (const auto& slot : slots) {
    if (!slot.init_reply.is_object() || !slot.runs) continue;
    const auto& started = slot.init_reply.value("state", nlohmann::json::object());
    const bool baseline_code = slot.role != slot_role::candidate;
    const bool declares_precision = !slot.runs->precision.empty();
    if (baseline_code) check_torch_settings(slot, checks);
    for (const auto& s : settings) {
      const bool baseline_only = s.way == direction::slower || s.way == direction::moved || s.way == direction::counted ||
                                 s.way == direction::lowered || s.way == direction::raised;
      if ((baseline_only && !baseline_code) ||
          (s.way == direction::less_precise && (baseline_code || declares_precision)) ||
          (s.way == direction::counted && !switches_why.empty()))
        continue;
      const auto* at_start = value_at(started, s);
      const bool any_move = s.way == direction::moved || s.way == direction::counted;
      const bool past = s.way == direction::lowered || s.way == direction::raised;
      if (at_start == nullptr || (!any_move && !past && *at_start == s.moved_to)) continue;
      for (const auto& seen : slot.worker_states) {
        const auto* now = value_at(seen, s);
        if (now == nullptr || (past ? !moved_past(*at_start, *now, s.way) : any_move ? *now == *at_start : *now != s.moved_to)) continue;
        add_check(checks, verify::checks::worker_state, slot.label, false,
                  fmt::format("{} in its worker after setup() or a visit{}", s.what,
                              s.way == direction::slower ? ": the baseline ran slower code than the same calls do as the process starts (a "
                                                           "baseline is what a competent engineer writes first)"
                              : s.way == direction::less_precise ? ": math less precise than the baseline's, with no precision change declared"
                              : s.way == direction::counted ? fmt::format(" ({} times at start, {} after; a pair that must, says why with "
                                                                          "p.switches_in_calls(reason))",
                                                                          at_start->dump(), now->dump())
                              : past ? fmt::format(" (read {} at start, {} after): the baseline ran slower code than the same calls do as "
                                                   "the process starts",
                                                   at_start->dump(), now->dump())
                              : s.way == direction::moved   ? fmt::format(": every variant runs under the settings the worker started "
                                                                          "with (read {} at start, {} after)",
                                                                          at_start->dump(), now->dump())
                                                                 : ""));
        break;
      }
    }
  }
}

}  // namespace aisp
