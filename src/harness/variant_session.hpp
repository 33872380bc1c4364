// One variant of one pair inside a worker process: owns the loaded workload's buffers, runs
// setup and warmup, takes samples, and runs the verified calls of the challenge battery.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "aisp/pair.hpp"
#include "audit/traffic_counters.hpp"
#include "harness/buffer_store.hpp"
#include "harness/process_probes.hpp"
#include "harness/rank_sync.hpp"
#include "harness/recorded_metrics.hpp"
#include "harness/timing.hpp"
#include "harness/variant_notes.hpp"
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
  bool read_flush = true;                // the cold flush reads; `--l2-flush write` writes (Note [clean flush])
  bool launch_gate = false;              // the judge's choice for this pair (Note [launch gate] in launch_gate.hpp)
  // Note [ranks]: this worker's rank of a multi-GPU pair, and the communicator the worker made
  // (an ncclComm_t; null for a host pair's ranks and for a single-GPU pair).
  int rank = 0;
  int world_size = 1;
  void* communicator = nullptr;
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
  std::size_t setup_subnormal_inputs = 0;          // subnormals in the inputs setup() left (O9)
  std::string access_policy;                       // what setup() left: a window or an L2 set-aside (X4); "" when none
  std::vector<std::string> library_precision;      // reduced-precision cuBLAS policies asked for (W2)
  variant_notes notes;                             // what setup() recorded through run_context::note()
};

// What one verified call left behind: its outputs and the process probes around it.
struct call_report {
  std::map<std::string, std::string> files;  // output name -> raw bytes file
  std::vector<std::string> mutated_inputs;
  std::size_t subnormal_inputs = 0;
  std::string launch_error;  // a failed launch that run() did not check (X8); "" when none
  int initial_priority = 0;  // the worker's nice value when it started: a change sticks (E3)
  int initial_scheduler = 0;                // its scheduling policy then (E3)
  std::uint64_t initial_affinity_hash = 0;  // its CPU affinity then (E3)
  process_snapshot before;
  process_snapshot after;
  std::vector<std::string> late_outputs;  // outputs that changed after run() returned (Note [late writes])
  double helper_cpu_after_return_s = 0;   // host pairs: other threads' CPU from run()'s return on
  std::string allocation_caller;          // where run()'s latest C allocation or mmap came from
};

// Output values at positions, keyed by output name.
using output_values = std::map<std::string, std::vector<double>>;

// A verified timed call (Note [fresh calls], Note [verified after the call] in
// support/kernel_entropy.hpp): its inputs' seed, the elements its outputs left holding the fill
// written before the sample, and its outputs at positions drawn after it returned.
struct timed_call_fingerprint {
  int sample_index = 0;
  std::uint64_t input_seed = 0;
  std::map<std::string, std::size_t> unwritten;              // elements still holding the fill
  // Note [coincident pattern] in verify/pattern_matches.hpp: some of them, with the value the
  // fill decodes to, so the judge can clear those that equal the right answer.
  std::map<std::string, std::vector<verify::pattern_match>> pattern_matches;
  std::uint64_t positions_seed = 0;  // drawn from the kernel's entropy after the call
  output_values probe_values;        // the outputs at those positions
};

// Where a verified sample's fingerprint goes the moment it is taken: out of the process before
// any later call of the variant runs (Note [verified after the call]).
using verified_sink = std::function<void(const timed_call_fingerprint&)>;

// Which calls a request of samples makes, and what they get before each call. The seeds come
// from the judge (drawn from its own entropy); absent, the worker draws them itself.
struct sample_plan {
  int count = 1;
  // Note [verified after the call]: each sample is verified with this chance, drawn after it
  // returned; nothing sent before a call says which.
  double verify_chance = 0.0;
  // Note [verified reservoir] (runner/sampling_rounds.cpp): instead, where `reservoir` > 0, the
  // worker's n-th sample (counting `offered_before` from earlier requests) with reservoir / n.
  int reservoir = 0;
  std::size_t offered_before = 0;
  std::size_t probes = 4096;  // output positions read from a verified sample
  std::optional<std::uint64_t> input_base;
  std::optional<std::uint64_t> fill_base;
  bool fresh_inputs = false;  // Note [input reuse] (runner/call_reuse.cpp): new inputs a call even where the pair fixes them
  // Note [batch reuse] (runner/call_reuse.cpp): one call a sample, unbatched and uncaptured,
  // where the mode batches calls; empty_window_s() then says what the window's fixed cost read.
  bool one_call = false;
};

class variant_session {
 public:
  variant_session(const pair& declared, const variant& chosen, session_options options);
  ~variant_session();
  variant_session(const variant_session&) = delete;
  variant_session& operator=(const variant_session&) = delete;

  // Frees the previous workload (teardown first), then allocates, fills, sets up and (unless
  // told not to) warms up. Outputs are poisoned before setup, so a setup() that writes them shows.
  // `benchmark`: the inputs come from the device generator and every call refreshes them; else
  // they come from the seed (as the reference sees them) and are restored after warmup.
  load_report load(const workload& work, bool warmup = true, bool benchmark = false);
  // Samples. Each gets fresh inputs (unless the pair fixes them) and an output fill first;
  // after each, when drawn (Notes [verified after the call], [verified reservoir]), its outputs
  // are fingerprinted and probed, and the fingerprint handed to `verified` at once.
  [[nodiscard]] std::vector<sample_record> sample(const sample_plan& plan, const verified_sink& verified);
  // True with `chance`, drawn now from the kernel's entropy; every rank draws alike (Note
  // [verified after the call]).
  [[nodiscard]] bool draws_with_chance(double chance);
  // The time a call of the last truth() took, as a timed sample reads it.
  [[nodiscard]] double truth_call_s() const { return truth_call_s_; }
  // Note [recorded metrics]: what the last sample()'s calls recorded through run_context::record.
  [[nodiscard]] recorded_values take_recorded();
  // Note [late look] (runner/sampling_rounds.cpp): `count` calls back to back on the inputs in
  // place, untimed, their recorded values dropped, ending early past `most_s`; the wall time they
  // took and how many were made (Note [soaked mean], runner/mean_check.cpp).
  struct soak_report {
    double wall_s = 0;
    int calls = 0;
  };
  soak_report soak(int count, double most_s);
  // One call on inputs from `input_seed`; the outputs at the probe positions of `positions_seed`
  // and at `extra` indices: the truth for another worker's verified sample. It is taken as a
  // timed sample is, and truth_call_s() says its time (Note [timed slower]).
  // `fresh_inputs`: a fixed-inputs pair's inputs too come from `input_seed` (Note [input reuse]).
  [[nodiscard]] std::pair<output_values, output_values> truth(std::uint64_t input_seed, std::uint64_t positions_seed,
                                                               std::size_t count,
                                                               const std::map<std::string, std::vector<std::size_t>>& extra,
                                                               bool fresh_inputs = false);
  // Poisons the outputs, runs the timed path once, writes each output to `<prefix>.<name>.bin`.
  // With `input_seed`, the inputs are first regenerated from it (the device generator); with
  // `fill_base`, the outputs get a random pattern drawn from it instead, as most timed calls do.
  call_report verified_call(const std::string& prefix, std::optional<std::uint64_t> input_seed = std::nullopt,
                            std::optional<std::uint64_t> fill_base = std::nullopt);
  // W3: the timed path run once more (one batch of calls_per_batch() calls) under the memory
  // system's hardware counters, outside every sample window; nullopt with `why` where counters
  // cannot be read (a host pair, no permission, a profiler already on the device).
  [[nodiscard]] std::optional<measured_traffic> measure_traffic(std::string& why);
  [[nodiscard]] int calls_per_batch() const { return calls_per_sample_; }
  // The median window around an empty kernel (a host pair's: around nothing) of the last one-call
  // sample() (Note [batch reuse]); 0 before one.
  [[nodiscard]] double empty_window_s() const { return empty_window_s_; }
  // Something that pins data in L2 outside the pair's declaration: a window on the harness's
  // stream, or a persisting-L2 set-aside (X4); "" when neither.
  [[nodiscard]] std::string access_policy_in_force() const;
  // Note [worker state]: the host inputs' address ranges (none before load() or on a GPU pair).
  [[nodiscard]] std::vector<std::pair<const void*, std::size_t>> host_input_ranges() const;
  // New input data at the same addresses (fresh seed, a challenge's values, or declared ones with
  // a few `scattered` elements of challenge levels).
  // `where_they_live`: a GPU pair's drawn on the device (Note [challenge refills on the device]).
  void refill(std::uint64_t seed, input_values values, const std::vector<input_values>& scattered = {}, bool where_they_live = false);
  // Declared inputs again after a challenge refilled them: a fixed-inputs pair's own (load()'s),
  // any other pair's drawn from `seed` as its calls draw them (a GPU pair's on the device: a host
  // refill of ch16:gemv_fp8_weights's benchmark-size inputs takes seconds, H100, 2026-12-05).
  void restore_inputs(std::uint64_t seed);
  // The same data at new addresses: new buffers, setup() again, nothing reused.
  void readdress(std::uint64_t seed);
  void set_element(const std::string& buffer, std::size_t index, double value);
  // Note [a copy's domain]: a derived input drawn again alone, or a source moved within its
  // copies' rounding (buffer_store::redraw_copy_alone, move_source_within_its_copies).
  void redraw_copy_alone(const std::string& copy, std::uint64_t seed);
  void move_source_within_its_copies(const std::string& source);

 private:
  class context;
  void unload();
  void prepare_timed_path();
  [[nodiscard]] std::function<void()> timed_call() const;
  [[nodiscard]] std::vector<sample_record> one_call_samples(const sample_plan& plan, std::uint64_t input_base, std::uint64_t fill_base,
                                                           const verified_sink& verified);
  [[nodiscard]] timed_call_fingerprint fingerprint_call(int sample_index, std::uint64_t input_seed, const output_fill& fill,
                                                        std::size_t probes);
  // Sample `i` of `plan` just returned: fingerprinted into `verified` when drawn (Notes [verified
  // after the call], [verified reservoir]).
  void maybe_verify(const sample_plan& plan, int i, std::uint64_t input_seed, const output_fill& fill,
                    const verified_sink& verified);
  void restore_fixed_inputs();
  // Note [work during the fill] (host_sampler.cpp): the next prepare_call's inputs drawn
  // privately, outside the sampler's readings, so that call only copies them in.
  void stage_call(std::uint64_t input_seed, bool fresh_inputs);
  // Note [fresh calls]: new inputs (unless the pair fixes them) and an output fill.
  void prepare_call(std::uint64_t input_seed, const output_fill& fill, bool fresh_inputs = false);
  void keep_unchecked_launch_error();
  [[nodiscard]] std::map<std::string, std::uint64_t> hash_inputs(std::size_t* subnormals) const;
  [[nodiscard]] std::map<std::string, std::uint64_t> hash_buffers(buffer_role role, std::size_t* subnormals) const;
  [[nodiscard]] output_values values_at(const buffer_store& store, std::uint64_t positions_seed, std::size_t count) const;
  // The values of `buffer` of `store` at `indices`, widened to fp64.
  [[nodiscard]] std::vector<double> decoded(const buffer_store& store, const owned_buffer& buffer,
                                            const std::vector<std::size_t>& indices) const;

  const pair& pair_;
  const variant& variant_;
  session_options options_;
  cudaStream_t stream_ = nullptr;
  process_snapshot initial_;  // the worker as it started: changes that stick (E3, children)
  workload work_;
  int calls_per_sample_ = 1;
  std::unique_ptr<rank_sync> ranks_;  // Note [ranks]: with a communicator only
  std::unique_ptr<buffer_store> buffers_;
  // Every buffer range this variant has been handed, in any load (Note [fresh addresses]).
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> handed_out_;
  [[nodiscard]] bool reuses_an_address(const buffer_store& store) const;
  void remember_addresses(const buffer_store& store);
  std::unique_ptr<context> context_;
  std::unique_ptr<sampler> sampler_;
  double empty_window_s_ = 0;  // Note [batch reuse]: the last one-call samples' fixed cost
  double truth_call_s_ = 0;    // Note [timed slower]: the last truth()'s call
  bool sampling_ = false;  // inside sample(): the calls' recorded values are kept (Note [recorded metrics])
  bool benchmark_size_ = false;  // the last load() was the benchmark size (Note [profiling one size])
  std::size_t initial_set_aside_ = 0;     // the context's persisting-L2 set-aside before any pair code
  std::string unchecked_launch_error_;    // a failed launch of run() found before the harness's own (X8)
  std::mt19937_64 own_entropy_{std::random_device{}()};        // seeds the judge did not send
};

// The fill before call `index` of a batch: a seeded pattern, or (one call in four) the poison.
[[nodiscard]] output_fill fill_for_call(std::uint64_t fill_base, std::uint64_t index);

}  // namespace aisp
