#include "harness/variant_session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>

#include "aisp/check.hpp"

namespace aisp {

class variant_session::context final : public run_context {
 public:
  context(const workload& work, const buffer_store& buffers, cudaStream_t stream)
      : work_(work), buffers_(buffers), stream_(stream) {}
  [[nodiscard]] const workload& work() const override { return work_; }
  [[nodiscard]] cudaStream_t stream() const override { return stream_; }
  [[nodiscard]] void* buffer(std::string_view name) const override {
    return buffers_.find(name).data;
  }
  [[nodiscard]] std::int64_t num_elements(std::string_view name) const override {
    return static_cast<std::int64_t>(buffers_.find(name).num_elements);
  }
  [[nodiscard]] dtype buffer_type(std::string_view name) const override {
    return buffers_.find(name).spec.type;
  }
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
}  // namespace

variant_session::variant_session(const pair& declared, const variant& chosen,
                                 session_options options)
    : pair_(declared), variant_(chosen), options_(options) {
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

load_report variant_session::load(const workload& work) {
  unload();
  load_report report;
  buffers_ = std::make_unique<buffer_store>(pair_, work, pair_.where());
  buffers_->fill_inputs(options_.seed);
  report.buffer_bytes = buffers_->total_bytes();
  context_ = std::make_unique<context>(work, *buffers_, stream_);
  sampler_ = pair_.where() == backend::cuda ? make_device_sampler(options_.mode, stream_)
                                            : make_host_sampler();

  auto start = std::chrono::steady_clock::now();
  if (variant_.setup) variant_.setup(*context_);
  if (stream_ != nullptr) AISP_CUDA_CHECK(cudaDeviceSynchronize());
  report.setup_s = seconds_since(start);

  // Warmup: module loads, lazy init and first-touch costs stay out of the samples (S6).
  start = std::chrono::steady_clock::now();
  const auto one_call = [this] { variant_.run(*context_); };
  while (report.warmup_calls < options_.warmup_calls || seconds_since(start) < options_.warmup_min_s) {
    one_call();
    if (stream_ != nullptr) AISP_CUDA_CHECK(cudaDeviceSynchronize());
    ++report.warmup_calls;
    if (report.warmup_calls >= 1000) break;
  }
  report.warmup_s = seconds_since(start);
  report.estimated_call_s = report.warmup_s / report.warmup_calls;

  if (options_.mode != timing_mode::cold && report.estimated_call_s > 0) {
    const double calls = std::ceil(options_.min_batched_sample_s / report.estimated_call_s);
    report.calls_per_sample = static_cast<int>(std::clamp(calls, 1.0, 10000.0));
  }
  sampler_->prepare(one_call, report.calls_per_sample);
  return report;
}

std::vector<sample_record> variant_session::sample(int count) {
  AISP_EXPECTS(sampler_ != nullptr, "sample() before load()");
  std::vector<sample_record> records;
  records.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) records.push_back(sampler_->take());
  return records;
}

std::map<std::string, std::string> variant_session::dump_outputs(const std::string& prefix) {
  AISP_EXPECTS(sampler_ != nullptr, "dump_outputs() before load()");
  buffers_->poison_outputs();
  sampler_->run_prepared_once();
  std::map<std::string, std::string> paths;
  for (const auto& b : buffers_->all()) {
    if (b.spec.role != buffer_role::output) continue;
    const auto bytes = buffers_->read(b);
    const std::string path = prefix + "." + b.spec.name + ".bin";
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    AISP_EXPECTS(file.good(), "could not write " + path);
    paths[b.spec.name] = path;
  }
  return paths;
}

}  // namespace aisp
