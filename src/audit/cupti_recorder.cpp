#include "audit/cupti_recorder.hpp"

#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "audit/cubin_scan.hpp"
#include "audit/cupti_watch.hpp"
#include "harness/process_probes.hpp"

namespace aisp {
namespace {

// What a callback id stands for; anything else is left disabled (no cost on its calls).
enum category : std::uint8_t { none, event_record, allocation, managed_allocation, host_callback, stream_creation,
                               stream_attribute, module_load, device_switch, launch_ex };

category classify(std::string_view name) {
  const auto starts = [&](std::string_view prefix) { return name.starts_with(prefix); };
  if (starts("cudaEventRecord")) return event_record;
  if (starts("cudaMallocManaged") || starts("cuMemAllocManaged")) return managed_allocation;
  if (starts("cudaMalloc") || starts("cudaHostAlloc") || starts("cuMemAlloc") || starts("cuMemHostAlloc") ||
      starts("cuMemCreate") || starts("cuArrayCreate") || starts("cudaMallocAsync"))
    return allocation;
  if (starts("cudaLaunchHostFunc") || starts("cudaStreamAddCallback") || starts("cuLaunchHostFunc") ||
      starts("cuStreamAddCallback"))
    return host_callback;
  if (starts("cudaStreamCreate") || starts("cuStreamCreate")) return stream_creation;
  if (starts("cudaStreamSetAttribute")) return stream_attribute;
  if (starts("cuModuleLoad") || starts("cuLibraryLoad") || starts("cuLinkComplete") || starts("cudaLibraryLoad"))
    return module_load;
  if (name == "cudaSetDevice" || name.starts_with("cudaSetDevice_v")) return device_switch;
  if (starts("cudaLaunchKernelExC") || starts("cuLaunchKernelEx")) return launch_ex;
  return none;
}

cupti_recorder* active_recorder = nullptr;

// Activity buffers are recycled, never freed: a fresh 4 MiB buffer costs a thousand page faults
// on first touch, which would land in the samples' fault count (M6).
constexpr std::size_t buffer_bytes = 4u << 20;
std::mutex buffer_pool_mutex;
std::vector<uint8_t*> buffer_pool;

// Note [allocation counter]: the audit's callbacks run on the thread whose API call triggered
// them, run()'s among them; their allocations are the harness's.
void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  const uncounted_allocations audit_code;
  *buffer = nullptr;
  {
    std::lock_guard lock(buffer_pool_mutex);
    if (!buffer_pool.empty()) {
      *buffer = buffer_pool.back();
      buffer_pool.pop_back();
    }
  }
  if (*buffer == nullptr) *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, buffer_bytes));
  *size = *buffer != nullptr ? buffer_bytes : 0;
  *max_records = 0;
}

void recycle(uint8_t* buffer) {
  std::lock_guard lock(buffer_pool_mutex);
  buffer_pool.push_back(buffer);
}

timeline_activity from_kernel(const CUpti_ActivityKernel10& k) {
  timeline_activity a;
  a.kind = activity_kind::kernel;
  a.name = k.name != nullptr ? k.name : "?";
  a.start_ns = k.start;
  a.end_ns = k.end;
  a.device = k.deviceId;
  a.stream = k.streamId;
  a.correlation = k.correlationId;
  a.device_launched = k.isDeviceLaunched != 0;
  a.access_policy_window = k.pAccessPolicyWindow != nullptr;
  a.launch_type = k.launchType;
  return a;
}

// C10: a managed-memory migration or page fault, named for the window audit ("fault" first for
// faults, whose value is a count, not bytes).
std::optional<timeline_activity> from_unified_memory(const CUpti_ActivityUnifiedMemoryCounter3& u) {
  const char* name = nullptr;
  switch (u.counterKind) {
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD: name = "migration HtoD"; break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH: name = "migration DtoH"; break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD: name = "migration DtoD"; break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT: name = "fault on the CPU"; break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT: name = "fault on the GPU"; break;
    default: return std::nullopt;
  }
  timeline_activity a;
  a.kind = activity_kind::unified_memory;
  a.name = name;
  a.start_ns = u.start;
  a.end_ns = std::max(u.end, u.start);
  a.device = u.dstId;
  a.stream = u.streamId;
  a.bytes = u.value;
  return a;
}

const char* copy_direction(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "copy";
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  const uncounted_allocations audit_code;
  std::vector<timeline_activity> records;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    timeline_activity a;
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        a = from_kernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(record));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto& c = *reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        a = {activity_kind::memcpy, copy_direction(c.copyKind), c.start, c.end, c.deviceId, c.streamId, c.correlationId, c.bytes};
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY2: {  // peer to peer (a copy from another GPU's memory, CUDA IPC)
        const auto& c = *reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
        a = {activity_kind::memcpy, "PtoP", c.start, c.end, c.deviceId, c.streamId, c.correlationId, c.bytes};
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto& m = *reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        a = {activity_kind::memset, "memset", m.start, m.end, m.deviceId, m.streamId, m.correlationId, m.bytes};
        break;
      }
      case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
        const auto& e = *reinterpret_cast<const CUpti_ActivityCudaEvent2*>(record);
        a = {activity_kind::event, "event", e.deviceTimestamp, e.deviceTimestamp, e.deviceId, e.streamId, e.correlationId};
        break;
      }
      case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER: {
        auto migration = from_unified_memory(*reinterpret_cast<const CUpti_ActivityUnifiedMemoryCounter3*>(record));
        if (!migration) continue;
        a = std::move(*migration);
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        const auto& call = *reinterpret_cast<const CUpti_ActivityAPI*>(record);
        a = {activity_kind::api, "api", call.start, call.end, 0, 0, call.correlationId};
        break;
      }
      case CUPTI_ACTIVITY_KIND_JIT: {
        const auto& j = *reinterpret_cast<const CUpti_ActivityJit2*>(record);
        a = {activity_kind::jit, "jit", j.start, j.end, j.deviceId, 0, j.correlationId};
        break;
      }
      default: continue;
    }
    records.push_back(std::move(a));
  }
  recycle(buffer);
  if (active_recorder != nullptr && !records.empty()) active_recorder->on_records(std::move(records));
}

void CUPTIAPI api_callback(void* user, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  const uncounted_allocations audit_code;
  auto* recorder = static_cast<cupti_recorder*>(user);
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (id != CUPTI_CBID_RESOURCE_MODULE_LOADED) return;
    const auto* resource = static_cast<const CUpti_ResourceData*>(data);
    const auto* module = static_cast<const CUpti_ModuleResourceData*>(resource->resourceDescriptor);
    if (module != nullptr) recorder->on_module_loaded(module->pCubin, module->cubinSize);
    return;
  }
  recorder->on_api(static_cast<int>(domain), id, data);
}

bool ok(CUptiResult result, std::string& why, const char* what) {
  if (result == CUPTI_SUCCESS) return true;
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  why = std::string(what) + ": " + (text != nullptr ? text : "unknown CUPTI error");
  return false;
}

// Enables the callbacks of one domain whose names fall in a category; returns the table.
std::vector<std::uint8_t> enable_domain(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain, std::uint32_t size) {
  std::vector<std::uint8_t> categories(size, none);
  for (std::uint32_t id = 1; id < size; ++id) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, id, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    const auto kind = classify(name);
    if (kind == none) continue;
    if (cuptiEnableCallback(1, subscriber, domain, id) == CUPTI_SUCCESS) categories[id] = kind;
  }
  return categories;
}

constexpr CUpti_ActivityKind recorded_kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                                 CUPTI_ACTIVITY_KIND_MEMCPY2,
                                                 CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_CUDA_EVENT,
                                                 CUPTI_ACTIVITY_KIND_JIT, CUPTI_ACTIVITY_KIND_RUNTIME,
                                                 CUPTI_ACTIVITY_KIND_DRIVER};

// C10: migrations and faults of managed memory. Not every system can count them (a hypervisor,
// no HMM); the audit still refuses undeclared managed allocations there, through the callbacks.
std::string count_unified_memory(std::uint32_t device) {
  std::vector<CUpti_ActivityUnifiedMemoryCounterConfig> config;
  for (auto kind : {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
                    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
                    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
                    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT}) {
    config.push_back({CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE, kind, device, 1});
  }
  std::string why;
  if (!ok(cuptiActivityConfigureUnifiedMemoryCounter(config.data(), static_cast<std::uint32_t>(config.size())), why,
          "configure unified-memory counters"))
    return "unavailable: " + why;
  if (!ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER), why, "enable unified-memory counters"))
    return "unavailable: " + why;
  return "on";
}

// Runtime calls reach the driver: only the outermost call of a thread counts.
thread_local int api_depth = 0;

}  // namespace

cupti_recorder::cupti_recorder(std::uint32_t device, bool keep_timeline) : device_(device), keep_timeline_(keep_timeline) {}

std::unique_ptr<cupti_recorder> cupti_recorder::start(std::uint32_t device, bool keep_timeline, std::string& why) {
  if (active_recorder != nullptr) {
    why = "a CUPTI recorder is already running in this process";
    return nullptr;
  }
  const audit_own_calls own;  // Note [audit tampering]: these calls are the audit's
  std::unique_ptr<cupti_recorder> recorder(new cupti_recorder(device, keep_timeline));
  if (!ok(cuptiActivityEnableCudaEventDeviceTimestamps(1), why, "event device timestamps")) return nullptr;
  if (!ok(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), why, "activity buffers")) return nullptr;
  CUpti_SubscriberHandle subscriber = nullptr;
  if (!ok(cuptiSubscribe(&subscriber, api_callback, recorder.get()), why, "subscribe")) return nullptr;
  recorder->subscriber_ = subscriber;
  active_recorder = recorder.get();
  for (auto kind : recorded_kinds) {
    if (!ok(cuptiActivityEnable(kind), why, "enable activity")) return nullptr;
  }
  recorder->runtime_categories_ = enable_domain(subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
  recorder->driver_categories_ = enable_domain(subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
  if (!ok(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED), why,
          "module callbacks"))
    return nullptr;
  return recorder;
}

cupti_recorder::~cupti_recorder() {
  if (active_recorder != this) return;
  const audit_own_calls own;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (subscriber_ != nullptr) cuptiUnsubscribe(static_cast<CUpti_SubscriberHandle>(subscriber_));
  active_recorder = nullptr;
}

void cupti_recorder::start_unified_memory_counters() {
  const audit_own_calls own;  // Note [audit tampering]
  unified_memory_state_ = count_unified_memory(device_);
}

void cupti_recorder::before_start_event() {
  open_window_ = {};
  pending_edge_ = edge::start;
}
void cupti_recorder::run_begins() { in_run_ = true; }
void cupti_recorder::run_ends() { in_run_ = false; }
void cupti_recorder::before_stop_event() { pending_edge_ = edge::stop; }
void cupti_recorder::sample_taken(int calls) {
  pending_edge_ = edge::none;
  open_window_.calls = calls;
  if (recording_) closed_windows_.push_back(open_window_);
}

void cupti_recorder::record_activity(bool on) {
  if (on == recording_) return;
  const audit_own_calls own;  // Note [audit tampering]: the audit toggling itself between visits
  for (auto kind : recorded_kinds) {
    if (on) {
      cuptiActivityEnable(kind);
    } else {
      cuptiActivityDisable(kind);
    }
  }
  if (unified_memory_state_ == "on") {
    if (on) {
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    } else {
      cuptiActivityDisable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    }
  }
  recording_ = on;
}

void cupti_recorder::phase_begins(std::string_view name) {
  std::uint64_t now = 0;
  cuptiGetTimestamp(&now);
  open_phases_.emplace_back(std::string(name), now);
}

void cupti_recorder::phase_ends() {
  if (open_phases_.empty()) return;
  std::uint64_t now = 0;
  cuptiGetTimestamp(&now);
  auto [name, began] = std::move(open_phases_.back());
  open_phases_.pop_back();
  if (!keep_timeline_) return;
  timeline_activity phase;
  phase.kind = activity_kind::phase;
  phase.name = std::move(name);
  phase.start_ns = began;
  phase.end_ns = now;
  phase.device = device_;
  std::lock_guard lock(records_mutex_);
  timeline_.push_back(std::move(phase));
}

void cupti_recorder::on_records(std::vector<timeline_activity> records) {
  std::lock_guard lock(records_mutex_);
  records_.insert(records_.end(), std::make_move_iterator(records.begin()), std::make_move_iterator(records.end()));
}

void cupti_recorder::on_api(int domain, std::uint32_t id, const void* data) {
  const auto& table = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime_categories_ : driver_categories_;
  const auto kind = id < table.size() ? static_cast<category>(table[id]) : none;
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  if (call->callbackSite == CUPTI_API_EXIT) {
    --api_depth;
    return;
  }
  const bool outermost = api_depth++ == 0;
  if (kind == event_record) {
    const auto expected = pending_edge_.exchange(edge::none);
    if (expected == edge::start) open_window_.start_correlation = call->correlationId;
    if (expected == edge::stop) open_window_.stop_correlation = call->correlationId;
    return;
  }
  if (kind == managed_allocation && outermost) ++managed_allocations_;  // setup's count too (C10)
  if (!in_run_ || !outermost) return;
  auto& api = open_window_.api;
  switch (kind) {
    case managed_allocation: ++api.allocations; break;
    case allocation: ++api.allocations; break;
    case host_callback: ++api.host_callbacks; break;
    case stream_creation: ++api.stream_creations; break;
    case module_load: ++api.module_loads; break;
    case stream_attribute: {
      const auto* p = static_cast<const cudaStreamSetAttribute_v11000_params*>(call->functionParams);
      if (p != nullptr && p->attr == cudaStreamAttributeAccessPolicyWindow) ++api.access_policy;
      break;
    }
    case launch_ex: {  // X4: a persisting-L2 window passed as a launch attribute
      bool window = false;
      if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        const auto* p = static_cast<const cudaLaunchKernelExC_v11060_params*>(call->functionParams);
        for (unsigned a = 0; p != nullptr && p->config != nullptr && a < p->config->numAttrs; ++a) {
          const auto& attribute = p->config->attrs[a];
          window = window || (attribute.id == cudaLaunchAttributeAccessPolicyWindow && attribute.val.accessPolicyWindow.num_bytes > 0);
        }
      } else {
        const auto* p = static_cast<const cuLaunchKernelEx_params*>(call->functionParams);
        for (unsigned a = 0; p != nullptr && p->config != nullptr && a < p->config->numAttrs; ++a) {
          const auto& attribute = p->config->attrs[a];
          window = window || (attribute.id == CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW && attribute.value.accessPolicyWindow.num_bytes > 0);
        }
      }
      if (window) ++api.access_policy;
      break;
    }
    case device_switch: {
      const auto* p = static_cast<const cudaSetDevice_v3020_params*>(call->functionParams);
      if (p != nullptr && static_cast<std::uint32_t>(p->device) != device_) ++api.device_switches;
      break;
    }
    default: break;
  }
}

void cupti_recorder::on_module_loaded(const void* cubin, std::size_t size) {
  if (in_run_) ++open_window_.api.module_loads;
  auto launchers = kernels_launching_children(cubin, size);
  std::lock_guard lock(records_mutex_);
  child_launchers_.merge(launchers);
}

void cupti_recorder::on_math_mode_change() {
  if (in_run_) ++open_window_.api.math_mode_changes;
}

std::vector<window_audit> cupti_recorder::audit_closed_windows() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(records_mutex_);
  auto audits = audit_windows(closed_windows_, records_, device_, child_launchers_);
  for (auto& audit : audits) audit.managed_allocations = managed_allocations_;
  closed_windows_.clear();
  if (keep_timeline_) keep_for_timeline();
  records_.clear();
  return audits;
}

// The trace shows the device's work and the harness's phases; the host's API calls (recorded
// for the window audit's L1 rule) would bury them.
void cupti_recorder::keep_for_timeline() {
  for (auto& r : records_) {
    if (r.kind != activity_kind::api) timeline_.push_back(std::move(r));
  }
}

std::vector<timeline_activity> cupti_recorder::take_timeline() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(records_mutex_);
  keep_for_timeline();
  records_.clear();
  return std::exchange(timeline_, {});
}

void note_math_mode_change() {
  if (active_recorder != nullptr) active_recorder->on_math_mode_change();
}

}  // namespace aisp
