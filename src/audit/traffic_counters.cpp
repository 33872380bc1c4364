// W3 traffic audit through the CUPTI Range Profiler (cupti_range_profiler.h, CUDA 13) and the
// profiler host API (cupti_profiler_host.h). One user range around `work`, user replay: the
// caller's work is re-run per pass, so kernels launched on any stream inside it are summed.
#include "audit/traffic_counters.hpp"

#include <cuda_runtime_api.h>

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <atomic>
#include <cstdint>

namespace aisp {
namespace {

// A CUPTI parameter block: zeroed, structSize set to the size this code was built against (CUPTI
// reads it to know which fields exist). A macro because each size is a macro named after its type.
template <class Params>
Params zeroed_params(std::size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}
#define AISP_CUPTI_PARAMS(type) zeroed_params<type>(type##_STRUCT_SIZE)

std::string cupti_text(CUptiResult result) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return text != nullptr ? text : "CUPTI error " + std::to_string(static_cast<int>(result));
}

bool ok(CUptiResult result, const char* step, std::string& why) {
  if (result == CUPTI_SUCCESS) return true;
  why = std::string(step) + ": " + cupti_text(result);
  if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || result == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES)
    why += " (ERR_NVGPUCTRPERM: GPU performance counters are restricted to admin users; run as root or load the "
           "driver with NVreg_RestrictProfilingToAdminUsers=0)";
  return false;
}

// The driver API without linking libcuda (aisp must start, and say why, where no driver is
// installed): the runtime hands out the driver's entry points.
template <class Function>
Function driver_entry(const char* name) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &function, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<Function>(function);
}

struct driver_api {
  decltype(&cuGetErrorString) error_string = driver_entry<decltype(&cuGetErrorString)>("cuGetErrorString");
  decltype(&cuCtxGetCurrent) get_current = driver_entry<decltype(&cuCtxGetCurrent)>("cuCtxGetCurrent");
  decltype(&cuCtxPushCurrent) push_current = driver_entry<decltype(&cuCtxPushCurrent)>("cuCtxPushCurrent");
  decltype(&cuCtxPopCurrent) pop_current = driver_entry<decltype(&cuCtxPopCurrent)>("cuCtxPopCurrent");
  decltype(&cuCtxGetDevice) get_device = driver_entry<decltype(&cuCtxGetDevice)>("cuCtxGetDevice");
  decltype(&cuCtxSynchronize) synchronize = driver_entry<decltype(&cuCtxSynchronize)>("cuCtxSynchronize");
  [[nodiscard]] bool complete() const {
    return error_string != nullptr && get_current != nullptr && push_current != nullptr && pop_current != nullptr &&
           get_device != nullptr && synchronize != nullptr;
  }
};

const driver_api& driver() {
  static const driver_api api;
  return api;
}

bool ok(CUresult result, const char* step, std::string& why) {
  if (result == CUDA_SUCCESS) return true;
  const char* text = nullptr;
  driver().error_string(result, &text);
  why = std::string(step) + ": " + (text != nullptr ? text : "CUDA error " + std::to_string(static_cast<int>(result)));
  return false;
}

// Why the device cannot be profiled, from cuptiProfilerDeviceSupported's per-feature answers.
std::string unsupported_reasons(const CUpti_Profiler_DeviceSupported_Params& p) {
  std::string out;
  const auto add = [&](CUpti_Profiler_Support_Level level, const char* what) {
    if (level == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED || level == CUPTI_PROFILER_CONFIGURATION_DISABLED)
      out += std::string(out.empty() ? "" : ", ") + what;
  };
  add(p.architecture, "architecture"), add(p.sli, "SLI"), add(p.vGpu, "vGPU");
  add(p.confidentialCompute, "confidential compute"), add(p.cmp, "CMP device"), add(p.wsl, "WSL");
  return out.empty() ? "unknown reason (MIG slice?)" : out;
}

// Everything a measurement holds, released in reverse on every exit path (an error midway, or
// `work` throwing), so a failure never leaves the context in a profiling session.
struct session {
  CUcontext pushed = nullptr;
  std::vector<std::uint8_t> availability;  // the host object may read it until deinitialized
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* object = nullptr;
  bool started = false;
  bool range_open = false;
  ~session() {
    if (object != nullptr) {
      auto pop = AISP_CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params);
      auto stop = AISP_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
      auto disable = AISP_CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
      pop.pRangeProfilerObject = stop.pRangeProfilerObject = disable.pRangeProfilerObject = object;
      if (range_open) cuptiRangeProfilerPopRange(&pop);
      if (started) cuptiRangeProfilerStop(&stop);
      cuptiRangeProfilerDisable(&disable);
    }
    if (host != nullptr) {
      auto deinit = AISP_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
      deinit.pHostObject = host;
      cuptiProfilerHostDeinitialize(&deinit);
    }
    if (pushed != nullptr) driver().pop_current(&pushed);
  }
};

// One counter session per process at a time: the hardware has one set of counters per device.
std::atomic<bool> busy{false};

// The config image: which counters to program in which pass, for this chip and what the device
// currently exposes (the availability image).
bool build_config(session& s, CUcontext ctx, const char* chip, const std::vector<const char*>& names,
                  std::vector<std::uint8_t>& config, std::size_t& passes, std::string& why) {
  auto avail = AISP_CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  avail.ctx = ctx;
  // Fails while another profiling or sampling session holds the device.
  if (!ok(cuptiProfilerGetCounterAvailability(&avail), "counter availability (device already profiled?)", why))
    return false;
  s.availability.assign(avail.counterAvailabilityImageSize, 0);
  avail.pCounterAvailabilityImage = s.availability.data();
  if (!ok(cuptiProfilerGetCounterAvailability(&avail), "counter availability", why)) return false;

  auto init = AISP_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
  init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  init.pChipName = chip;
  init.pCounterAvailabilityImage = s.availability.data();
  if (!ok(cuptiProfilerHostInitialize(&init), "profiler host initialize", why)) return false;
  s.host = init.pHostObject;

  auto add = AISP_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  add.pHostObject = s.host;
  add.ppMetricNames = const_cast<const char**>(names.data());
  add.numMetrics = names.size();
  if (!ok(cuptiProfilerHostConfigAddMetrics(&add), "add metrics", why)) return false;
  auto size = AISP_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  size.pHostObject = s.host;
  if (!ok(cuptiProfilerHostGetConfigImageSize(&size), "config image size", why)) return false;
  config.assign(size.configImageSize, 0);
  auto image = AISP_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  image.pHostObject = s.host;
  image.configImageSize = config.size();
  image.pConfigImage = config.data();
  if (!ok(cuptiProfilerHostGetConfigImage(&image), "config image", why)) return false;
  auto count = AISP_CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  count.configImageSize = config.size();
  count.pConfigImage = config.data();
  if (!ok(cuptiProfilerHostGetNumOfPasses(&count), "pass count", why)) return false;
  passes = count.numOfPasses;
  return true;
}

// Runs the replay loop: every pass is Start, Push, work, Pop, Stop; CUPTI says when the last
// pass has been submitted.
bool run_passes(session& s, const std::function<void()>& work, std::size_t expected, int& ran, std::string& why) {
  const std::size_t limit = expected + 2;  // CUPTI decides; this only stops a runaway loop
  for (bool submitted = false; !submitted;) {
    if (static_cast<std::size_t>(ran) >= limit) {
      why = "range profiler wanted more than " + std::to_string(limit) + " passes";
      return false;
    }
    auto start = AISP_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
    start.pRangeProfilerObject = s.object;
    if (!ok(cuptiRangeProfilerStart(&start), "range profiler start", why)) return false;
    s.started = true;
    auto push = AISP_CUPTI_PARAMS(CUpti_RangeProfiler_PushRange_Params);
    push.pRangeProfilerObject = s.object;
    push.pRangeName = "aisp_traffic";
    if (!ok(cuptiRangeProfilerPushRange(&push), "push range", why)) return false;
    s.range_open = true;
    work();
    ++ran;
    // The contract says `work` synchronizes; this makes a forgotten stream sync harmless.
    if (!ok(driver().synchronize(), "synchronize after work", why)) return false;
    auto pop = AISP_CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params);
    pop.pRangeProfilerObject = s.object;
    if (!ok(cuptiRangeProfilerPopRange(&pop), "pop range", why)) return false;
    s.range_open = false;
    auto stop = AISP_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
    stop.pRangeProfilerObject = s.object;
    if (!ok(cuptiRangeProfilerStop(&stop), "range profiler stop", why)) return false;
    s.started = false;
    submitted = stop.isAllPassSubmitted != 0;
  }
  return true;
}

}  // namespace

std::optional<std::vector<double>> measure_metrics(CUcontext ctx, const std::vector<std::string>& metrics,
                                                   const std::function<void()>& work, std::string& why, int* passes) {
  if (busy.exchange(true)) {
    why = "a traffic measurement is already running in this process";
    return std::nullopt;
  }
  struct release_busy {
    ~release_busy() { busy = false; }
  } release;
  if (!driver().complete()) {
    why = "the CUDA driver's context functions are not available";
    return std::nullopt;
  }
  if (ctx == nullptr && (!ok(driver().get_current(&ctx), "current context", why) || ctx == nullptr)) {
    if (why.empty()) why = "no current CUDA context";
    return std::nullopt;
  }
  // The images outlive the session: CUPTI holds on to them until the range profiler is disabled.
  std::vector<std::uint8_t> config, counters;
  session s;
  // `work` and the CUPTI calls below run against the caller's context.
  if (!ok(driver().push_current(ctx), "push context", why)) return std::nullopt;
  s.pushed = ctx;
  CUdevice device = 0;
  if (!ok(driver().get_device(&device), "context device", why)) return std::nullopt;

  // Once per process: loads the profiler libraries and hooks the driver. Fails where the legacy
  // event/metric API is already in use (CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED).
  static const CUptiResult initialized = [] {
    auto init = AISP_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
    return cuptiProfilerInitialize(&init);
  }();
  if (!ok(initialized, "profiler initialize", why)) return std::nullopt;

  auto support = AISP_CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
  support.cuDevice = device;
  support.api = CUPTI_PROFILER_RANGE_PROFILING;
  if (!ok(cuptiProfilerDeviceSupported(&support), "device support query", why)) return std::nullopt;
  if (support.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    why = "range profiling unsupported on this device: " + unsupported_reasons(support);
    return std::nullopt;
  }
  auto chip = AISP_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  chip.deviceIndex = static_cast<std::size_t>(device);
  if (!ok(cuptiDeviceGetChipName(&chip), "chip name", why)) return std::nullopt;

  std::vector<const char*> names;
  for (const auto& m : metrics) names.push_back(m.c_str());
  std::size_t expected_passes = 0;
  if (!build_config(s, ctx, chip.pChipName, names, config, expected_passes, why)) return std::nullopt;

  auto enable = AISP_CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
  enable.ctx = ctx;
  if (!ok(cuptiRangeProfilerEnable(&enable), "range profiler enable", why)) return std::nullopt;
  s.object = enable.pRangeProfilerObject;

  // Room for exactly one range: ours.
  auto size = AISP_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  size.pRangeProfilerObject = s.object;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = 1;
  size.maxNumRangeTreeNodes = 1;
  if (!ok(cuptiRangeProfilerGetCounterDataSize(&size), "counter data size", why)) return std::nullopt;
  counters.assign(size.counterDataSize, 0);
  auto image = AISP_CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  image.pRangeProfilerObject = s.object;
  image.counterDataSize = counters.size();
  image.pCounterData = counters.data();
  if (!ok(cuptiRangeProfilerCounterDataImageInitialize(&image), "counter data init", why)) return std::nullopt;

  auto set = AISP_CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  set.pRangeProfilerObject = s.object;
  set.configSize = config.size();
  set.pConfig = config.data();
  set.counterDataImageSize = counters.size();
  set.pCounterDataImage = counters.data();
  set.range = CUPTI_UserRange;
  set.replayMode = CUPTI_UserReplay;
  set.maxRangesPerPass = 1;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  if (!ok(cuptiRangeProfilerSetConfig(&set), "set config", why)) return std::nullopt;

  int ran = 0;
  if (!run_passes(s, work, expected_passes, ran, why)) return std::nullopt;
  if (passes != nullptr) *passes = ran;

  auto decode = AISP_CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  decode.pRangeProfilerObject = s.object;
  if (!ok(cuptiRangeProfilerDecodeData(&decode), "decode counters", why)) return std::nullopt;
  auto info = AISP_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = counters.data();
  info.counterDataImageSize = counters.size();
  if (!ok(cuptiRangeProfilerGetCounterDataInfo(&info), "counter data info", why)) return std::nullopt;
  if (decode.numOfRangeDropped != 0 || info.numTotalRanges != 1) {
    why = "expected one profiled range, got " + std::to_string(info.numTotalRanges) + " (" +
          std::to_string(decode.numOfRangeDropped) + " dropped)";
    return std::nullopt;
  }
  std::vector<double> values(names.size(), 0.0);
  auto eval = AISP_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  eval.pHostObject = s.host;
  eval.pCounterDataImage = counters.data();
  eval.counterDataImageSize = counters.size();
  eval.rangeIndex = 0;
  eval.ppMetricNames = names.data();
  eval.numMetrics = names.size();
  eval.pMetricValues = values.data();
  if (!ok(cuptiProfilerHostEvaluateToGpuValues(&eval), "evaluate metrics", why)) return std::nullopt;
  return values;
}

std::optional<measured_traffic> measure_traffic(CUcontext ctx, const std::function<void()>& work, std::string& why) {
  // lts__t_sectors_* count 32-byte sectors at the L2 tag stage: requests, not misses.
  static const std::vector<std::string> metrics = {
      "lts__t_sectors_srcnode_gpc_op_read.sum", "lts__t_sectors_srcnode_gpc_op_write.sum",
      "lts__t_sectors_op_read.sum",             "lts__t_sectors_op_write.sum",
      "dram__bytes_read.sum",                   "dram__bytes_write.sum"};
  constexpr double sector_bytes = 32.0;
  int passes = 0;
  const auto values = measure_metrics(ctx, metrics, work, why, &passes);
  if (!values) return std::nullopt;
  const auto& v = *values;
  return measured_traffic{v[0] * sector_bytes, v[1] * sector_bytes, v[2] * sector_bytes, v[3] * sector_bytes,
                          v[4], v[5], passes};
}

}  // namespace aisp
