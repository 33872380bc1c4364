// One variant of one pair inside a worker process: owns the loaded workload's buffers, runs
// setup and warmup, takes samples, and runs the verified calls of the challenge battery.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "aisp/pair.hpp"
#include "harness/buffer_store.hpp"
#include "harness/process_probes.hpp"
#include "harness/timing.hpp"
#include "verify/pattern_matches.hpp"

namespace aisp {

struct session_options {
  timing_mode mode = timing_mode::cold;
  std::uint64_t seed = 42;
  // hot and graph modes batch calls until a sample lasts this long (T4: >= 100x event resolution).
  double min_batched_sample_s = 100e-6;
  int warmup_calls = 3;
  double warmup_min_s = 0.02;
  timing_observer* observer = nullptr;  // the CUPTI audit, when on; outlives the session
};

struct load_report {
  double setup_s = 0;
  double warmup_s = 0;
  int warmup_calls = 0;
  int calls_per_sample = 1;
  double estimated_call_s = 0;
  std::size_t buffer_bytes = 0;
  std::size_t setup_wrote_outputs = 0;             // output elements setup() touched (L2)
  std::vector<std::string> setup_mutated_inputs;   // X3
};

// What one verified call left behind: its outputs and the process probes around it.
struct call_report {
  std::map<std::string, std::string> files;  // output name -> raw bytes file
  std::vector<std::string> mutated_inputs;
  std::size_t subnormal_inputs = 0;
  std::string launch_error;  // a failed launch that run() did not check (X8); "" when none
  int initial_priority = 0;  // the worker's nice value when it started: a change sticks (E3)
  process_snapshot before;
  process_snapshot after;
};

// A verified timed call: outputs held a random pattern before the sample.
struct timed_call_fingerprint {
  int sample_index = 0;
  std::map<std::string, std::size_t> unwritten;              // elements still holding the pattern
  // Note [coincident pattern] in verify/pattern_matches.hpp: the first of them, with the value
  // the pattern decodes to, so the judge can clear those that equal the right answer.
  std::map<std::string, std::vector<verify::pattern_match>> pattern_matches;
  std::map<std::string, std::vector<double>> probe_values;   // at probe_positions(seed, n, k)
};

class variant_session {
 public:
  variant_session(const pair& declared, const variant& chosen, session_options options);
  ~variant_session();
  variant_session(const variant_session&) = delete;
  variant_session& operator=(const variant_session&) = delete;

  // Frees the previous workload (teardown first), then allocates, fills, sets up and (unless
  // told not to) warms up. Outputs are poisoned before setup, so a setup() that writes them shows.
  load_report load(const workload& work, bool warmup = true);
  // Samples; those at `verify_indices` run on patterned outputs and are fingerprinted.
  [[nodiscard]] std::vector<sample_record> sample(int count, const std::vector<int>& verify_indices,
                                                  std::uint64_t pattern_seed, std::size_t probes,
                                                  std::vector<timed_call_fingerprint>& fingerprints);
  // Poisons the outputs, runs the timed path once, writes each output to `<prefix>.<name>.bin`.
  call_report verified_call(const std::string& prefix);
  // New input data at the same addresses (fresh seed, or exact integers).
  void refill(std::uint64_t seed, bool exact_integers);
  // The same data at new addresses: new buffers, setup() again, nothing reused.
  void readdress(std::uint64_t seed);
  void set_element(const std::string& buffer, std::size_t index, double value);

 private:
  class context;
  void unload();
  void prepare_timed_path();
  [[nodiscard]] std::map<std::string, std::uint64_t> hash_inputs(std::size_t* subnormals) const;

  const pair& pair_;
  const variant& variant_;
  session_options options_;
  cudaStream_t stream_ = nullptr;
  int initial_priority_ = 0;
  workload work_;
  int calls_per_sample_ = 1;
  std::unique_ptr<buffer_store> buffers_;
  std::unique_ptr<context> context_;
  std::unique_ptr<sampler> sampler_;
};

}  // namespace aisp
