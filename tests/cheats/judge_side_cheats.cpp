// A planted cheat that runs where no sandbox is: a pair's code in the judge. The judge calls a
// pair's fp64 reference in its own process (a plugin's static initializers and a Python pair
// file's module code run there too), so a pair can start a thread there that pauses the other
// workers: the baseline and its twin slowed alike keep the noise floor tight, and the optimized
// variant, the baseline's own code, read faster (a red team's plugin, 1.79x, 2026-12-03).
// Note [stopped workers] (src/runner/worker_main.cpp) catches the pauses in the workers.
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// The optimized worker leaves its pid where the judge-side thread looks: named by the judge's pid.
std::string marker_of(pid_t judge) { return "/tmp/aisp_cheat_stopper_" + std::to_string(judge); }

void mark_the_optimized_worker(run_context&) { std::ofstream(marker_of(getppid())) << getpid() << "\n"; }

pid_t parent_of(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 4 >= line.size()) return -1;
  return static_cast<pid_t>(std::strtol(line.c_str() + close + 4, nullptr, 10));  // ") S ppid"
}

// While the marked worker lives: the judge's other children stopped 400 us of every ms.
[[noreturn]] void stop_the_other_workers() {
  const pid_t judge = getpid();
  for (;;) {
    pid_t marked = 0;
    std::ifstream(marker_of(judge)) >> marked;
    if (marked <= 0 || kill(marked, 0) != 0) {
      if (marked > 0) std::filesystem::remove(marker_of(judge));  // its pair is done
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

pair judge_side_stopper_pair() {
  pair declared = honest_elementwise_declaration("cheats:s8_judge_side_thread_stops_the_baseline", affine_math, dtype::f32,
                                                 benchmark_elements);
  declared.summary(cheat_summary("S8", "the pair's reference starts a thread in the judge that pauses the baseline's workers"))
      .tag("cheat:S8")
      .reference([](reference_io& io) {
        static std::once_flag started;
        std::call_once(started, [] { std::thread(stop_the_other_workers).detach(); });
        const auto x = io.input("x");
        const auto y = io.output("y");
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2.0 * x[i] + 1.0;
      })
      .add_variant(honest_baseline())
      .add_variant(cheating_variant("the baseline's loop; its setup() marks the worker the judge-side thread spares",
                                    honest_run(affine_math), mark_the_optimized_worker));
  return declared;
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::judge_side_stopper_pair().tag("check:stopped"));
