#include "exec_bridge/program_confinement.hpp"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>

namespace aisp::exec {

// Note [confined programs]
// The worker reads its own timers, floating-point mode, priority and affinity (Notes [armed
// timers], [floating-point environment]); an executable pair's program is another process,
// whose settings it cannot read. A red team's baseline program armed a 4 ms CPU-time timer
// whose handler burned 2 ms of each period: 2.05-2.12x for the same program and loop, every
// check passing (round ten, 2026-12-05). So the program runs under a filter of its own, stacked
// on the worker's: arming a timer (setitimer, timer_create) ends it with SIGSYS, which the
// bridge reports as the sandbox's. Its priority is read by `priority-change` as the worker's
// is. Not covered: its floating-point mode (an instruction, not a call).
program_filter make_program_filter() {
  program_filter made;
  auto& code = made.instructions;
  std::size_t at = 0;
  const auto add = [&](sock_filter instruction) { code[at++] = instruction; };
  add(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  add(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
  add(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));  // written for x86-64 only, as the worker's
  add(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  for (const long number : {SYS_setitimer, SYS_timer_create}) {
    add(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(number), 0, 1));
    add(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  }
  add(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  made.length = at;
  return made;
}

bool confine_program(const program_filter& filter) {
#if defined(__x86_64__)
  sock_fprog program{static_cast<unsigned short>(filter.length), const_cast<sock_filter*>(filter.instructions.data())};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) == 0;
#else
  (void)filter;
  return false;
#endif
}

}  // namespace aisp::exec
