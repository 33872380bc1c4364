#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "aisp/check.hpp"
#include "harness/cuda_event.hpp"
#include "harness/device_probes.hpp"
#include "harness/launch_gate.hpp"
#include "harness/plugin_loader.hpp"
#include "harness/process_probes.hpp"
#include "harness/timing.hpp"

namespace aisp {

std::string_view timing_mode_name(timing_mode mode) {
  switch (mode) {
    case timing_mode::cold: return "cold";
    case timing_mode::hot: return "hot";
    case timing_mode::graph: return "graph";
  }
  return "?";
}

std::optional<timing_mode> parse_timing_mode(std::string_view text) {
  for (auto mode : {timing_mode::cold, timing_mode::hot, timing_mode::graph}) {
    if (timing_mode_name(mode) == text) return mode;
  }
  return std::nullopt;
}

namespace {

struct gate_opener {
  explicit gate_opener(launch_gate* opened) : gate(opened) {}
  gate_opener(const gate_opener&) = delete;
  gate_opener& operator=(const gate_opener&) = delete;
  ~gate_opener() {
    if (gate != nullptr) gate->open();
  }
  launch_gate* gate;
};

class device_sampler final : public sampler {
 public:
  device_sampler(timing_mode mode, cudaStream_t stream, timing_observer* observer, l2_flush_kind flush, stream_step align, bool gated)
      : mode_(mode), stream_(stream), observer_(observer), flusher_(flush), align_(std::move(align)) {
    if (gated && !align_) gate_.emplace();  // a multi-GPU pair's ranks open their windows at a barrier instead
  }
  ~device_sampler() override { release_graph(); }

  void prepare(std::function<void()> one_call, int calls_per_sample) override {
    AISP_EXPECTS(calls_per_sample >= 1, "a sample needs at least one call");
    one_call_ = std::move(one_call);
    calls_ = calls_per_sample;
    release_graph();
    if (mode_ == timing_mode::graph) capture_graph();
  }

  sample_record take(const std::function<void()>& before) override {
    const auto begin = std::chrono::steady_clock::now();
    sample_record record = take_once(before, begin);
    // Note [launch gate]: run() waited for the GPU, or the host took longer to queue the calls
    // than the GPU to run them (host work the gate would hide): sample it ungated, from now on.
    if (gate_ && (gate_->timed_out() || queued_s_ > record.duration_s * record.calls)) {
      gate_.reset();
      record = take_once(before, begin);
    }
    return record;
  }

  sample_record take_one(const std::function<void()>& before, const std::function<void()>& call) override {
    // Not take(): an empty window queues slower than it runs, and that must not turn the gate
    // off for the timed samples.
    single_call_ = &call;
    const sample_record record = take_once(before, std::chrono::steady_clock::now());
    single_call_ = nullptr;
    return record;
  }

  void run_prepared_once() override {
    run_batch();
    const uncounted_allocations harness_sync;  // Note [allocation counter]: not run()'s
    AISP_CUDA_CHECK(cudaDeviceSynchronize());
  }

 private:
  sample_record take_once(const std::function<void()>& before, std::chrono::steady_clock::time_point begin) {
    if (before) before();
    if (mode_ != timing_mode::hot && single_call_ == nullptr) {
      AISP_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
      flusher_.flush(stream_);
    }
    AISP_CUDA_CHECK(cudaDeviceSynchronize());
    const double others_before = other_threads_cpu_s();
    const long long faults_before = minor_faults_so_far();
    const auto host_start = std::chrono::steady_clock::now();
    if (align_) {  // Note [ranks]: every rank's window opens together, after a barrier
      AISP_CUDA_CHECK(cudaEventRecord(aligning_.get(), stream_));
      align_(stream_);
    }
    if (gate_) gate_->close(stream_);  // Note [launch gate]
    const gate_opener opens_on_any_exit{gate_ ? &*gate_ : nullptr};  // run() may throw
    const auto queue_start = std::chrono::steady_clock::now();
    if (observer_ != nullptr) observer_->before_start_event();
    AISP_CUDA_CHECK(cudaEventRecord(start_.get(), stream_));
    if (observer_ != nullptr) observer_->run_begins();
    run_batch();
    if (observer_ != nullptr) {
      observer_->run_ends();
      observer_->before_stop_event();
    }
    AISP_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_));
    auto released = host_start;
    if (gate_) {  // the window is queued: let it run
      queued_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - queue_start).count();
      gate_->open();
      released = std::chrono::steady_clock::now();
    }
    // The whole device, not the stream: work a variant hid on another stream still lands
    // inside the host span (T1), and any asynchronous fault surfaces here.
    AISP_CUDA_CHECK(cudaDeviceSynchronize());
    const auto host_stop = std::chrono::steady_clock::now();
    const double others_after = other_threads_cpu_s();
    const long long faults_after = minor_faults_so_far();
    AISP_CUDA_CHECK(cudaGetLastError());  // a launch that failed silently inside run() (X8)
    AISP_CUDA_CHECK(take_plugin_cuda_errors());  // ... in a plugin's own CUDA runtime (Note [plugins])
    float elapsed_ms = 0;
    AISP_CUDA_CHECK(cudaEventElapsedTime(&elapsed_ms, start_.get(), stop_.get()));
    const int calls = single_call_ != nullptr ? 1 : calls_;
    if (observer_ != nullptr) observer_->sample_taken(calls);
    sample_record record;
    record.calls = calls;
    record.gated = gate_.has_value();
    record.duration_s = static_cast<double>(elapsed_ms) * 1e-3 / calls;
    // Gated, the host span starts when the gate opens: the host's enqueueing is not in the
    // window, and the wait past its stop event is what escaped (Note [launch gate]).
    record.host_wall_s = std::chrono::duration<double>(host_stop - released).count();
    if (align_) {
      // The host span began before the barrier; the wait for the other ranks is not this
      // rank's work (and would read as escaped work, Note [host excess]).
      float barrier_ms = 0;
      AISP_CUDA_CHECK(cudaEventElapsedTime(&barrier_ms, aligning_.get(), start_.get()));
      record.host_wall_s = std::max(record.host_wall_s - static_cast<double>(barrier_ms) * 1e-3, static_cast<double>(elapsed_ms) * 1e-3);
    }
    record.sm_clock_mhz = clock_probe_.measure_mhz(stream_);
    record.other_threads_cpu_s = others_after - others_before;
    record.minor_faults = faults_after - faults_before;
    record.cost_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return record;
  }

  void run_batch() {
    if (single_call_ != nullptr) {
      if (*single_call_) (*single_call_)();
      return;
    }
    if (graph_exec_ != nullptr) {
      AISP_CUDA_CHECK(cudaGraphLaunch(graph_exec_, stream_));
      return;
    }
    for (int call = 0; call < calls_; ++call) one_call_();
  }

  // cudaErrorStreamCapture* (900-908): what a capture refuses, as opposed to a broken call.
  static bool refused_by_capture(cudaError_t code) {
    return code >= cudaErrorStreamCaptureUnsupported && code <= cudaErrorStreamCaptureWrongThread;
  }

  [[noreturn]] static void refuse_graph_mode(cudaError_t code) {
    (void)cudaGetLastError();  // not sticky: clear it for the worker's next request
    throw unsupported_mode(std::string("run() cannot be captured into a CUDA graph (") + cudaGetErrorName(code) + ": " +
                           cudaGetErrorString(code) + "); --mode graph skips this pair, the other modes time it");
  }

  void capture_graph() {
    AISP_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    const auto abandon = [this] {
      cudaGraph_t abandoned = nullptr;
      cudaStreamEndCapture(stream_, &abandoned);
      if (abandoned != nullptr) cudaGraphDestroy(abandoned);
    };
    try {
      for (int call = 0; call < calls_; ++call) one_call_();
    } catch (const cuda_error& error) {
      abandon();
      if (refused_by_capture(error.code())) refuse_graph_mode(error.code());
      throw;
    } catch (...) {
      abandon();
      throw;
    }
    const cudaError_t ended = cudaStreamEndCapture(stream_, &graph_);
    if (refused_by_capture(ended)) refuse_graph_mode(ended);
    AISP_CUDA_CHECK(ended);
    AISP_CUDA_CHECK(cudaGraphInstantiate(&graph_exec_, graph_, 0));
  }

  void release_graph() {
    if (graph_exec_ != nullptr) cudaGraphExecDestroy(graph_exec_);
    if (graph_ != nullptr) cudaGraphDestroy(graph_);
    graph_exec_ = nullptr;
    graph_ = nullptr;
  }

  timing_mode mode_;
  cudaStream_t stream_;
  timing_observer* observer_;
  std::function<void()> one_call_;
  int calls_ = 1;
  const std::function<void()>* single_call_ = nullptr;  // take_one()'s call, for the sample it takes
  l2_flusher flusher_;
  stream_step align_;
  sm_clock_probe clock_probe_;
  cuda_event aligning_;  // before the barrier of a multi-GPU pair's ranks
  std::optional<launch_gate> gate_;  // Note [launch gate]; gone once a run() waited on it
  double queued_s_ = 0;              // the last gated sample: host time to queue its calls
  cuda_event start_;
  cuda_event stop_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
};

}  // namespace

std::unique_ptr<sampler> make_device_sampler(timing_mode mode, cudaStream_t stream, timing_observer* observer, bool read_flush,
                                             stream_step align, bool launch_gate) {
  return std::make_unique<device_sampler>(mode, stream, observer, read_flush ? l2_flush_kind::read : l2_flush_kind::write,
                                          std::move(align), launch_gate);
}

}  // namespace aisp
