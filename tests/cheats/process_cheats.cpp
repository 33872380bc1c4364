// Planted cheats of issue 16 (process isolation): setup() reaches out of its own computation to
// the other workers, the judge's channel or the CPUs. run() itself is honest; each must fail with
// its row's code (Note [worker sandbox]: most are denied by the seccomp filters, and counted).
// Run: aisp_cheats bench run --targets cheats
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// The judge's other workers: processes whose parent is this worker's parent.
std::vector<pid_t> sibling_workers() {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (const dirent* entry = readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0 || pid == getpid()) continue;
    const std::string path = std::string("/proc/") + entry->d_name + "/stat";
    std::FILE* stat = std::fopen(path.c_str(), "r");
    if (stat == nullptr) continue;
    int parent = 0;
    // pid (comm) state ppid: the comm may hold spaces, so read past its closing parenthesis.
    char text[512] = {};
    const std::size_t got = std::fread(text, 1, sizeof(text) - 1, stat);
    std::fclose(stat);
    const char* after = std::strrchr(text, ')');
    if (got > 0 && after != nullptr && std::sscanf(after + 1, " %*c %d", &parent) == 1 && parent == getppid())
      found.push_back(pid);
  }
  closedir(proc);
  return found;
}

// The sockets this worker holds: its request channel and the judge's reply channel, wherever
// they sit under the descriptor limit (the reply channel is a high one).
std::vector<int> socket_descriptors() {
  std::vector<int> found;
  rlimit limit{};
  const int highest = getrlimit(RLIMIT_NOFILE, &limit) == 0 ? static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 65536)) : 1024;
  for (int fd = 0; fd < highest; ++fd) {
    struct stat info {};
    if (fstat(fd, &info) == 0 && S_ISSOCK(info.st_mode)) found.push_back(fd);
  }
  return found;
}

// ---- L5: a helper process forked in setup() (it could load the CPUs or signal the others) ----
void fork_a_helper(run_context&) {
  if (fork() == 0) {
    sleep(3);
    _exit(0);
  }
}

// ---- L5: a shell started in setup() (system() spawns through clone(CLONE_VM | CLONE_VFORK)) ----
void spawn_a_shell(run_context&) {
  const int status = std::system("sleep 3 &");
  keep_alive(&status);
}

// ---- V1: the demonstration of issue 16: SIGSTOP the baseline and twin while this one runs ----
void stop_the_siblings(run_context&) {
  for (const pid_t pid : sibling_workers()) {
    kill(pid, SIGSTOP);
    kill(pid, SIGCONT);
  }
}

// ---- V1: the same through pidfds (pidfd_open + pidfd_send_signal) ----
void signal_the_siblings_by_pidfd(run_context&) {
  for (const pid_t pid : sibling_workers()) {
    const long fd = syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) syscall(SYS_pidfd_send_signal, static_cast<int>(fd), SIGCONT, nullptr, 0);
  }
}

// ---- V1: read a sibling's memory (its buffers, the judge's answers in flight) ----
void read_a_sibling(run_context&) {
  char copy[64];
  for (const pid_t pid : sibling_workers()) {
    iovec local{copy, sizeof(copy)};
    iovec remote{reinterpret_cast<void*>(0x400000), sizeof(copy)};
    process_vm_readv(pid, &local, 1, &remote, 1, 0);
  }
}

// ---- E3: renice the baseline and twin to the lowest priority ----
void renice_the_siblings(run_context&) {
  for (const pid_t pid : sibling_workers()) setpriority(PRIO_PROCESS, static_cast<id_t>(pid), 19);
}

// ---- E3: pin the baseline and twin onto one shared CPU ----
void repin_the_siblings(run_context&) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  for (const pid_t pid : sibling_workers()) sched_setaffinity(pid, sizeof(one), &one);
}

// ---- V1: write a forged answer straight into the judge's reply channel ----
void write_to_the_channel(run_context&) {
  const char forged[] = "{\"ok\":true,\"samples\":[{\"t\":1e-9,\"wall\":1e-9,\"mhz\":0,\"calls\":1}]}\n";
  for (const int fd : socket_descriptors()) {
    const ssize_t sent = send(fd, forged, sizeof(forged) - 1, MSG_DONTWAIT);
    keep_alive(&sent);
  }
}

// ---- V1: keep a private copy of the channel for later ----
void duplicate_the_channel(run_context&) {
  for (const int fd : socket_descriptors()) {
    const int copy = fcntl(fd, F_DUPFD_CLOEXEC, 100);
    keep_alive(&copy);
  }
}

// ---- L5: a helper thread started in setup() spins on a CPU while every worker is timed (one,
// so that the 2-core CI machine keeps a core for the worker being timed: started by the first
// setup() of the process only, where each setup() had added another) ----
void spin_a_helper_thread(run_context&) {
  static std::once_flag started;
  std::call_once(started, [] {
    std::thread([] {
      volatile double sink = 1.0;
      for (;;) sink = sink * 1.0000001 + 1e-9;
    }).detach();
  });
}

// ---- V1: ignore SIGSYS, so that the sandbox's later denials would go unreported ----
// (Reading the handler, as Python's signal module does for every signal, is allowed.)
void ignore_sigsys(run_context&) {
  struct sigaction old {};
  sigaction(SIGSYS, nullptr, &old);  // allowed: reads only
  signal(SIGSYS, SIG_IGN);           // denied
}

// ---- E3: the worker pins itself to one CPU ----
void pin_to_one_cpu(run_context&) {
  cpu_set_t current;
  CPU_ZERO(&current);
  if (sched_getaffinity(0, sizeof(current), &current) != 0) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &current)) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  sched_setaffinity(0, sizeof(one), &one);
}

// ---- E3: the worker switches itself to SCHED_BATCH ----
void batch_scheduling(run_context&) {
  sched_param param{};
  param.sched_priority = 0;
  sched_setscheduler(0, SCHED_BATCH, &param);
}

// A fixture whose setup() does `cheat` and whose run() is honest.
pair setup_cheat(const char* target, std::string_view code, const char* what, stage_fn cheat) {
  return elementwise_pair(target, code, cheating_variant(what, honest_run(affine_math), std::move(cheat)));
}

}  // namespace
}  // namespace aisp::cheats

namespace cheats = aisp::cheats;

AISP_REGISTER(cheats::setup_cheat("cheats:l5_forks_a_helper_in_setup", "L5", "forks a helper process in setup()",
                                  cheats::fork_a_helper).tag("check:sandbox"));
AISP_REGISTER(cheats::setup_cheat("cheats:l5_spawns_a_shell", "L5", "starts a shell with system() in setup()",
                                  cheats::spawn_a_shell).tag("check:sandbox"));
AISP_REGISTER(cheats::setup_cheat("cheats:l5_spins_a_helper_thread", "L5", "starts a spinning thread in setup()",
                                  cheats::spin_a_helper_thread).tag("check:worker-cpu"));
AISP_REGISTER(cheats::setup_cheat("cheats:v1_ignores_sigsys", "V1", "sets SIGSYS to SIG_IGN in setup() (after reading it)",
                                  cheats::ignore_sigsys).tag("check:sandbox"));
AISP_REGISTER(cheats::setup_cheat("cheats:v1_stops_the_siblings", "V1", "SIGSTOPs and SIGCONTs the other workers",
                                  cheats::stop_the_siblings).tag("check:sandbox"));
AISP_REGISTER(cheats::setup_cheat("cheats:v1_signals_the_siblings_by_pidfd", "V1",
                                  "signals the other workers through pidfds", cheats::signal_the_siblings_by_pidfd).tag("check:sandbox"));
AISP_REGISTER(cheats::setup_cheat("cheats:v1_reads_a_sibling", "V1", "reads another worker's memory",
                                  cheats::read_a_sibling).tag("check:sandbox"));
AISP_REGISTER(cheats::setup_cheat("cheats:v1_writes_to_the_channel", "V1",
                                  "writes a forged answer into the judge's reply channel", cheats::write_to_the_channel).tag("check:sandbox"));
AISP_REGISTER(cheats::setup_cheat("cheats:v1_duplicates_the_channel", "V1", "keeps a copy of the judge's channel",
                                  cheats::duplicate_the_channel).tag("check:sandbox"));
AISP_REGISTER(cheats::setup_cheat("cheats:e3_renices_the_siblings", "E3", "renices the other workers to 19",
                                  cheats::renice_the_siblings).tag("check:sandbox"));
AISP_REGISTER(cheats::setup_cheat("cheats:e3_repins_the_siblings", "E3", "pins the other workers onto CPU 0",
                                  cheats::repin_the_siblings).tag("check:sandbox"));
AISP_REGISTER(cheats::setup_cheat("cheats:e3_pins_itself_to_one_cpu", "E3", "pins the worker to one CPU in setup()",
                                  cheats::pin_to_one_cpu).tag("check:scheduling-change"));
AISP_REGISTER(cheats::setup_cheat("cheats:e3_batch_scheduling", "E3", "switches the worker to SCHED_BATCH in setup()",
                                  cheats::batch_scheduling).tag("check:scheduling-change"));
