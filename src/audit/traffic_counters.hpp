// Validity row W3 ("undeclared shortcuts"): how many bytes one call of a piece of GPU work really
// moved, read from the memory system's hardware counters through the CUPTI Range Profiler (CUDA
// 13), so the harness can hold it against the bytes the benchmark declared. A kernel that skips
// every other row reports the same time story as an honest one; only the counters see that it
// moved half the bytes.
//
// Note [traffic counters and tracing]: the harness's CUPTI activity tracing and callback
// subscriber may stay on while this runs (checked on H100, CUDA 13.0, driver 580: same counts with
// and without them, records and callbacks keep arriving). Costs: the work runs once per profiler
// pass (one pass for measure_traffic's metrics on H100), so records and callbacks see each launch
// that often; measure outside any timed sample window and mark the phase so the window audit skips
// it. Kernel tracing adds one 32-byte L2 write per launch. What cannot share the device: another
// counter session (Nsight Compute, DCGM profiling, a second measure_traffic).
#pragma once

#include <cuda.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace aisp {

struct measured_traffic {
  // Bytes every client inside the GPCs (SM L1/TEX, TMA, constant caches) asked L2 to read or
  // write. These count requests, so they do not depend on what L2 already held: the number to
  // compare with a kernel's declared bytes. On H100 a TMA bulk copy and a DtoD cudaMemcpy both
  // show up here in full; reads carry a few KB of instruction and constant fetches.
  double l2_read_bytes = 0;
  double l2_write_bytes = 0;
  // Every L2 request, from any client. On Hopper it also counts each request again where it
  // crosses between the two L2 partitions (about 1.5x l2_read for a streaming copy on H100): a
  // diagnostic, not the number to compare with declared bytes.
  double l2_all_read_bytes = 0;
  double l2_all_write_bytes = 0;
  // What reached HBM. Depends on cache warmth, and dirty lines may still sit in L2 when the
  // range ends, so writes can read low by up to the L2 size.
  double dram_read_bytes = 0;
  double dram_write_bytes = 0;
  int passes = 0;  // how many times `work` ran
};

// Runs `work` (which enqueues GPU work on `ctx`'s streams and synchronizes) under the range
// profiler as one user range, once per pass the metrics need (user replay: `work` must be
// idempotent). Kernels and copies on every stream of the context inside the range are summed.
// nullptr ctx means the calling thread's current context. Returns nullopt with `why` filled when
// the counters cannot be read: no permission (ERR_NVGPUCTRPERM), an unsupported device (MIG,
// vGPU, confidential compute), or a profiler already holding the device.
std::optional<measured_traffic> measure_traffic(CUcontext ctx, const std::function<void()>& work, std::string& why);

// The general form: the GPU values of counter metrics named with their rollup
// ("dram__bytes_read.sum"), in the order given. `passes`, if not null, gets the replay count.
std::optional<std::vector<double>> measure_metrics(CUcontext ctx, const std::vector<std::string>& metrics,
                                                   const std::function<void()>& work, std::string& why,
                                                   int* passes = nullptr);

}  // namespace aisp
