// A planted cheat that runs where no sandbox is: a pair's code in the judge. The judge calls a
// pair's fp64 reference in its own process (a plugin's static initializers and a Python pair
// file's module code run there too), so a pair can start a thread there that pauses the other
// workers: the baseline and its twin slowed alike keep the noise floor tight, and the optimized
// variant, the baseline's own code, read faster (a red team's plugin, 1.79x, 2026-12-03).
// Note [stopped workers] (src/runner/worker_main.cpp) catches the pauses in the workers; Note
// [contended visits] (src/runner/contention_check.cpp) a judge-side thread that keeps the CPUs
// busy while the baseline runs and stands aside while the optimized variant does.
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// The optimized worker leaves its pid where the judge-side thread looks: named by the cheat and
// the judge's pid.
std::string marker_of(const char* cheat, pid_t judge) { return std::string("/tmp/aisp_cheat_") + cheat + "_" + std::to_string(judge); }

template <const char* Cheat>
void mark_the_optimized_worker(run_context&) {
  std::ofstream(marker_of(Cheat, getppid())) << getpid() << "\n";
}

// The live worker the marker names, or 0 (none yet, or its pair is done: the marker goes).
pid_t marked_worker(const char* cheat, pid_t judge) {
  pid_t marked = 0;
  std::ifstream(marker_of(cheat, judge)) >> marked;
  if (marked > 0 && kill(marked, 0) != 0) {
    std::filesystem::remove(marker_of(cheat, judge));
    marked = 0;
  }
  return marked;
}

pid_t parent_of(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 4 >= line.size()) return -1;
  return static_cast<pid_t>(std::strtol(line.c_str() + close + 4, nullptr, 10));  // ") S ppid"
}

// While the marked worker lives: the judge's other children stopped 400 us of every ms.
constexpr char stopper[] = "stopper";

[[noreturn]] void stop_the_other_workers() {
  const pid_t judge = getpid();
  for (;;) {
    const pid_t marked = marked_worker(stopper, judge);
    if (marked == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    std::vector<pid_t> others;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const auto name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const auto pid = static_cast<pid_t>(std::strtol(name.c_str(), nullptr, 10));
      if (pid != marked && parent_of(name) == judge) others.push_back(pid);
    }
    for (const pid_t pid : others) kill(pid, SIGSTOP);
    std::this_thread::sleep_for(std::chrono::microseconds(400));
    for (const pid_t pid : others) kill(pid, SIGCONT);
    std::this_thread::sleep_for(std::chrono::microseconds(600));
  }
}

// The honest affine pair whose fp64 reference starts `start` in the judge once, and whose optimized
// variant (the baseline's loop) marks its worker for the judge-side thread `Cheat` runs.
template <const char* Cheat>
pair judge_side_pair(const char* target, const char* summary, void (*start)(), const char* spared) {
  pair declared = honest_elementwise_declaration(target, affine_math, dtype::f32, benchmark_elements);
  declared.summary(cheat_summary("S8", summary))
      .tag("cheat:S8")
      .reference([start](reference_io& io) {
        static std::once_flag started;
        std::call_once(started, start);
        const auto x = io.input("x");
        const auto y = io.output("y");
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2.0 * x[i] + 1.0;
      })
      .add_variant(honest_baseline())
      .add_variant(cheating_variant(spared, honest_run(affine_math), mark_the_optimized_worker<Cheat>));
  return declared;
}

pair judge_side_stopper_pair() {
  return judge_side_pair<stopper>("cheats:s8_judge_side_thread_stops_the_baseline",
                                  "the pair's reference starts a thread in the judge that pauses the baseline's workers",
                                  [] { std::thread(stop_the_other_workers).detach(); },
                                  "the baseline's loop; its setup() marks the worker the judge-side thread spares");
}

// Whether process `pid` is running or waiting for a CPU (state R).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'R';
}

constexpr char hog[] = "hog";

// One of a CPU's worth of spinning threads: busy while the marked worker is not running (the
// baseline's and its twin's visits, and the gaps), aside while it runs.
[[noreturn]] void hog_while_the_marked_worker_rests() {
  const pid_t judge = getpid();
  for (;;) {
    const pid_t marked = marked_worker(hog, judge);
    if (marked == 0 || running(marked)) {
      std::this_thread::sleep_for(std::chrono::microseconds(marked == 0 ? 2000 : 100));
      continue;
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(300);
    while (std::chrono::steady_clock::now() < until) {
    }
  }
}

pair judge_side_hog_pair() {
  return judge_side_pair<hog>("cheats:s8_judge_side_threads_hog_the_cpus",
                              "the pair's reference starts threads in the judge that keep every CPU busy except while the "
                              "optimized variant's worker runs",
                              [] {
                                for (unsigned cpu = 0; cpu < std::max(1u, std::thread::hardware_concurrency()); ++cpu)
                                  std::thread(hog_while_the_marked_worker_rests).detach();
                              },
                              "the baseline's loop; its setup() marks the worker the judge-side threads stand aside for");
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::judge_side_stopper_pair().tag("check:stopped"));
AISP_REGISTER(aisp::cheats::judge_side_hog_pair().tag("check:contended"));
