// One variant of one pair inside a worker process: owns the loaded workload's buffers, runs
// setup and warmup, takes samples, and dumps the outputs of the timed path for the judge.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "aisp/pair.hpp"
#include "harness/buffer_store.hpp"
#include "harness/timing.hpp"

namespace aisp {

struct session_options {
  timing_mode mode = timing_mode::cold;
  std::uint64_t seed = 42;
  // hot and graph modes batch calls until a sample lasts this long (T4: >= 100x event resolution).
  double min_batched_sample_s = 100e-6;
  int warmup_calls = 3;
  double warmup_min_s = 0.02;
};

struct load_report {
  double setup_s = 0;
  double warmup_s = 0;
  int warmup_calls = 0;
  int calls_per_sample = 1;
  double estimated_call_s = 0;
  std::size_t buffer_bytes = 0;
};

class variant_session {
 public:
  variant_session(const pair& declared, const variant& chosen, session_options options);
  ~variant_session();
  variant_session(const variant_session&) = delete;
  variant_session& operator=(const variant_session&) = delete;

  // Frees the previous workload (teardown first), then allocates, fills, sets up and warms up.
  load_report load(const workload& work);
  [[nodiscard]] std::vector<sample_record> sample(int count);
  // Poisons the outputs, runs the timed path once, and writes each output's raw bytes to
  // `<prefix>.<buffer>.bin`. Returns buffer name -> path.
  std::map<std::string, std::string> dump_outputs(const std::string& prefix);

 private:
  class context;
  void unload();

  const pair& pair_;
  const variant& variant_;
  session_options options_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<buffer_store> buffers_;
  std::unique_ptr<context> context_;
  std::unique_ptr<sampler> sampler_;
};

}  // namespace aisp
