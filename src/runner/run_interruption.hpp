// Note [interrupted runs]: Ctrl-C used to kill the judge at once, its workers living on a while,
// the history listing the run as `running` forever and results.json holding no pair (a user,
// 2026-12-03). Now the first SIGINT or SIGTERM is noted: no pair starts after it, the pair under
// way ends at its next wait for a worker (its workers killed), and is left out of the results as
// interrupted, not recorded as a failure of its code; the run is saved and recorded as
// interrupted with every pair it finished; `bench run` exits 128 + the signal.
//
// Workers run in process groups of their own, so a terminal's Ctrl-C (sent to its whole
// foreground group) reaches the judge alone: it reached the workers too and killed them in the
// middle of a call, and the pair read as the user's crash ("worker was killed by signal 2"; a
// user's walkthrough, 2026-12-04). A second signal within a second is the same one delivered
// twice (`timeout -s INT` signals the process, then its group) and is ignored; a later one
// kills every live worker's group and then the judge, at once.
#pragma once

#include <sys/types.h>

namespace aisp {

// Installs the handlers for a run's length (the previous ones come back at its end) and clears
// what an earlier run noted.
class interruption_watch {
 public:
  interruption_watch();
  ~interruption_watch();
  interruption_watch(const interruption_watch&) = delete;
  interruption_watch& operator=(const interruption_watch&) = delete;
  [[nodiscard]] int signal() const;

 private:
  void (*previous_int_)(int);
  void (*previous_term_)(int);
};

// The signal that interrupted the run under way, 0 for none (async-signal-safe to read).
[[nodiscard]] int run_interruption();

// The live workers' process groups, which a second signal kills before the judge dies.
void register_worker_group(pid_t leader);
void unregister_worker_group(pid_t leader);

}  // namespace aisp
