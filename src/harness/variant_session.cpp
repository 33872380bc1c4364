#include "harness/variant_session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>

#include <nvtx3/nvToolsExt.h>

#include "aisp/check.hpp"
#include "support/element_codec.hpp"
#include "support/seeded_fill.hpp"

namespace aisp {

class variant_session::context final : public run_context {
 public:
  context(const workload& work, const buffer_store& buffers, cudaStream_t stream)
      : work_(work), buffers_(buffers), stream_(stream) {}
  [[nodiscard]] const workload& work() const override { return work_; }
  [[nodiscard]] cudaStream_t stream() const override { return stream_; }
  [[nodiscard]] void* buffer(std::string_view name) const override { return buffers_.find(name).data; }
  [[nodiscard]] std::int64_t num_elements(std::string_view name) const override {
    return static_cast<std::int64_t>(buffers_.find(name).num_elements);
  }
  [[nodiscard]] dtype buffer_type(std::string_view name) const override { return buffers_.find(name).spec.type; }
  [[nodiscard]] void*& user_state() override { return user_state_; }

 private:
  workload work_;
  const buffer_store& buffers_;
  cudaStream_t stream_;
  void* user_state_ = nullptr;
};

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool is_subnormal_element(dtype type, const unsigned char* bytes, std::size_t index) {
  if (!dtype_is_float(type)) return false;
  const double value = load_as_double(type, bytes, index);
  return value != 0 && std::abs(value) < dtype_smallest_normal(type);
}

// A phase of the session (setup, warmup, samples, verify): an NVTX range for Nsight, and a
// span in the audit's timeline for `--trace`.
class phase_scope {
 public:
  phase_scope(timing_observer* observer, const char* name) : observer_(observer) {
    nvtxRangePushA(name);
    if (observer_ != nullptr) observer_->phase_begins(name);
  }
  ~phase_scope() {
    if (observer_ != nullptr) observer_->phase_ends();
    nvtxRangePop();
  }
  phase_scope(const phase_scope&) = delete;
  phase_scope& operator=(const phase_scope&) = delete;

 private:
  timing_observer* observer_;
};

}  // namespace

variant_session::variant_session(const pair& declared, const variant& chosen, session_options options)
    : pair_(declared), variant_(chosen), options_(options), initial_priority_(take_process_snapshot().priority) {
  if (pair_.where() == backend::cuda) {
    AISP_CUDA_CHECK(cudaFree(nullptr));  // create the context before anything is timed (C6)
    AISP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamDefault));
  }
}

variant_session::~variant_session() {
  try {
    unload();
  } catch (...) {  // a failing teardown must not mask the error that ended the session
  }
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void variant_session::unload() {
  if (context_ && variant_.teardown) variant_.teardown(*context_);
  sampler_.reset();
  context_.reset();
  buffers_.reset();
}

std::map<std::string, std::uint64_t> variant_session::hash_inputs(std::size_t* subnormals) const {
  std::map<std::string, std::uint64_t> hashes;
  for (const auto& b : buffers_->all()) {
    if (b.spec.role != buffer_role::input) continue;
    const auto bytes = buffers_->read(b);
    hashes[b.spec.name] = hash_bytes(bytes.data(), bytes.size());
    if (subnormals != nullptr) {
      for (std::size_t i = 0; i < b.num_elements; ++i) *subnormals += is_subnormal_element(b.spec.type, bytes.data(), i);
    }
  }
  return hashes;
}

void variant_session::prepare_timed_path() {
  sampler_ = pair_.where() == backend::cuda ? make_device_sampler(options_.mode, stream_, options_.observer) : make_host_sampler();
  sampler_->prepare([this] { variant_.run(*context_); }, calls_per_sample_);
}

load_report variant_session::load(const workload& work, bool warmup) {
  unload();
  work_ = work;
  load_report report;
  buffers_ = std::make_unique<buffer_store>(pair_, work, pair_.where());
  buffers_->fill_inputs(options_.seed);
  buffers_->poison_outputs();
  report.buffer_bytes = buffers_->total_bytes();
  context_ = std::make_unique<context>(work_, *buffers_, stream_);

  const auto inputs_before = hash_inputs(nullptr);
  auto start = std::chrono::steady_clock::now();
  {
    const phase_scope phase(options_.observer, "setup");
    if (variant_.setup) variant_.setup(*context_);
    if (stream_ != nullptr) AISP_CUDA_CHECK(cudaDeviceSynchronize());
  }
  report.setup_s = seconds_since(start);
  // Setup may not touch outputs (L2) or inputs (X3): check both before anything runs.
  for (const auto& b : buffers_->all()) {
    if (b.spec.role != buffer_role::output) continue;
    const auto bytes = buffers_->read(b);
    for (std::size_t i = 0; i < b.num_elements; ++i) report.setup_wrote_outputs += !is_poison(b.spec.type, bytes.data(), i);
  }
  for (const auto& [name, hash] : hash_inputs(nullptr)) {
    if (inputs_before.at(name) != hash) report.setup_mutated_inputs.push_back(name);
  }

  // Warmup: module loads, lazy init and first-touch costs stay out of the samples (S6).
  start = std::chrono::steady_clock::now();
  {
    const phase_scope phase(options_.observer, "warmup");
    while (warmup && (report.warmup_calls < options_.warmup_calls || seconds_since(start) < options_.warmup_min_s)) {
      variant_.run(*context_);
      if (stream_ != nullptr) AISP_CUDA_CHECK(cudaDeviceSynchronize());
      ++report.warmup_calls;
      if (report.warmup_calls >= 1000) break;
    }
  }
  report.warmup_s = seconds_since(start);
  report.estimated_call_s = report.warmup_calls > 0 ? report.warmup_s / report.warmup_calls : 0;
  calls_per_sample_ = 1;
  if (options_.mode != timing_mode::cold && report.estimated_call_s > 0) {
    const double calls = std::ceil(options_.min_batched_sample_s / report.estimated_call_s);
    calls_per_sample_ = static_cast<int>(std::clamp(calls, 1.0, 10000.0));
  }
  report.calls_per_sample = calls_per_sample_;
  prepare_timed_path();
  return report;
}

std::vector<sample_record> variant_session::sample(int count, const std::vector<int>& verify_indices,
                                                   std::uint64_t pattern_seed, std::size_t probes,
                                                   std::vector<timed_call_fingerprint>& fingerprints) {
  AISP_EXPECTS(sampler_ != nullptr, "sample() before load()");
  const phase_scope phase(options_.observer, "samples");
  std::vector<sample_record> records;
  records.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const bool verified = std::find(verify_indices.begin(), verify_indices.end(), i) != verify_indices.end();
    if (verified) buffers_->fill_outputs_with_pattern(pattern_seed);  // untimed, before the flush
    records.push_back(sampler_->take());
    if (!verified) continue;
    timed_call_fingerprint fingerprint;
    fingerprint.sample_index = i;
    for (const auto& b : buffers_->all()) {
      if (b.spec.role != buffer_role::output) continue;
      const auto bytes = buffers_->read(b);
      const auto pattern = pattern_bytes(pattern_seed, b);
      const std::size_t width = dtype_size(b.spec.type);
      std::size_t unwritten = 0;
      auto& matches = fingerprint.pattern_matches[b.spec.name];
      for (std::size_t e = 0; e < b.num_elements; ++e) {
        const bool holds_pattern = std::equal(bytes.begin() + static_cast<std::ptrdiff_t>(e * width),
                                              bytes.begin() + static_cast<std::ptrdiff_t>((e + 1) * width),
                                              pattern.begin() + static_cast<std::ptrdiff_t>(e * width));
        if (!holds_pattern) continue;
        ++unwritten;
        if (matches.size() < verify::max_listed_pattern_matches) {
          const double value = load_as_double(b.spec.type, bytes.data(), e);
          matches.push_back({e, std::isnan(value) ? std::nullopt : std::optional<double>(value)});
        }
      }
      fingerprint.unwritten[b.spec.name] = unwritten;
      auto& values = fingerprint.probe_values[b.spec.name];
      for (std::size_t position : probe_positions(pattern_seed, b.num_elements, probes)) {
        values.push_back(load_as_double(b.spec.type, bytes.data(), position));
      }
    }
    fingerprints.push_back(std::move(fingerprint));
  }
  return records;
}

call_report variant_session::verified_call(const std::string& prefix) {
  AISP_EXPECTS(sampler_ != nullptr, "verified_call() before load()");
  const phase_scope phase(options_.observer, "verify");
  call_report report;
  buffers_->poison_outputs();
  const auto inputs_before = hash_inputs(nullptr);
  report.before = take_process_snapshot();
  sampler_->run_prepared_once();
  report.after = take_process_snapshot();
  report.initial_priority = initial_priority_;
  if (stream_ != nullptr) {
    // A bad launch configuration fails without a sticky error: only the last-error slot knows.
    if (const cudaError_t launch = cudaGetLastError(); launch != cudaSuccess) report.launch_error = cudaGetErrorName(launch);
  }
  for (const auto& [name, hash] : hash_inputs(&report.subnormal_inputs)) {
    if (inputs_before.at(name) != hash) report.mutated_inputs.push_back(name);
  }
  for (const auto& b : buffers_->all()) {
    if (b.spec.role != buffer_role::output) continue;
    const auto bytes = buffers_->read(b);
    const std::string path = prefix + "." + b.spec.name + ".bin";
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    AISP_EXPECTS(file.good(), "could not write " + path);
    report.files[b.spec.name] = path;
  }
  return report;
}

void variant_session::refill(std::uint64_t seed, bool exact_integers) {
  AISP_EXPECTS(buffers_ != nullptr, "refill() before load()");
  buffers_->fill_inputs(seed, exact_integers);
}

void variant_session::readdress(std::uint64_t seed) {
  AISP_EXPECTS(buffers_ != nullptr, "readdress() before load()");
  // The new buffers are allocated while the old ones still exist, so no address is reused.
  auto moved = std::make_unique<buffer_store>(pair_, work_, pair_.where());
  moved->fill_inputs(seed);
  moved->poison_outputs();
  if (variant_.teardown) variant_.teardown(*context_);
  sampler_.reset();
  context_ = std::make_unique<context>(work_, *moved, stream_);
  buffers_ = std::move(moved);
  if (variant_.setup) variant_.setup(*context_);
  if (stream_ != nullptr) AISP_CUDA_CHECK(cudaDeviceSynchronize());
  prepare_timed_path();
}

void variant_session::set_element(const std::string& buffer, std::size_t index, double value) {
  AISP_EXPECTS(buffers_ != nullptr, "set_element() before load()");
  buffers_->write_element(buffers_->find(buffer), index, value);
}

}  // namespace aisp
