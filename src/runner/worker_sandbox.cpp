#include "runner/worker_sandbox.hpp"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/ioprio.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>

namespace aisp::sandbox {

std::string_view denial_name(denial kind) {
  switch (kind) {
    case denial::new_process: return "start a process";
    case denial::signal_other: return "signal another process";
    case denial::trace_other: return "trace or reach into another process";
    case denial::renice_other: return "renice or re-limit another process";
    case denial::repin_other: return "re-pin or re-schedule another process";
    case denial::exec: return "exec another program";
    case denial::channel_write: return "write to the judge's channel";
    case denial::channel_copy: return "duplicate or close the judge's channel";
    case denial::sigsys_handler: return "replace the sandbox's SIGSYS handler";
    case denial::dumpable: return "make the worker dumpable again";
    case denial::timestamp_counter: return "trap or forbid the timestamp counter";
    case denial::perf_event: return "open a performance-monitoring event (its sampling interrupts every call)";
    case denial::speculation_control: return "change its CPU speculation controls (a store-bypass mitigation slows every call)";
    case denial::huge_pages: return "refuse transparent huge pages (every 4 KiB page of its buffers then costs a TLB entry and a fault)";
  }
  return "?";
}

std::string_view denial_code(denial kind) {
  switch (kind) {
    case denial::new_process: return "L5";
    case denial::renice_other:
    case denial::repin_other: return "E3";
    case denial::timestamp_counter: return "T6";
    case denial::perf_event:
    case denial::speculation_control:
    case denial::huge_pages: return "S8";  // a tax on the worker's own calls, as an armed timer is
    default: return "V1";
  }
}

namespace {

std::array<std::atomic<std::uint64_t>, denial_kinds> denied{};

#if defined(__x86_64__)

constexpr std::uint32_t trap(denial kind) { return SECCOMP_RET_TRAP | static_cast<std::uint32_t>(kind); }

// One condition on a call's arguments or instruction pointer; a rule fires when all hold.
enum class test : std::uint8_t { arg_eq, arg_ne, arg_lacks_bits, arg_at_most, arg_nonzero, ip_ne };
struct condition {
  test kind;
  std::uint8_t arg;
  std::uint64_t value;
};
struct rule {
  long number;
  std::uint32_t action;
  std::array<condition, 2> conditions{};
  std::uint8_t condition_count = 0;
};

constexpr std::uint32_t arg_low(std::uint8_t arg) {
  return static_cast<std::uint32_t>(offsetof(seccomp_data, args) + 8u * arg);
}
constexpr std::uint32_t ip_low = offsetof(seccomp_data, instruction_pointer);

// A classic-BPF program built in place: no allocation, so stage 1 can run between fork and exec.
class filter_program {
 public:
  void load(std::uint32_t offset) { emit(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset)); }
  void ret(std::uint32_t action) { emit(BPF_STMT(BPF_RET | BPF_K, action)); }

  // Kill a call from another ABI (i386, x32): the rules below speak x86-64 numbers only.
  void prologue() {
    load(offsetof(seccomp_data, arch));
    emit(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
    ret(SECCOMP_RET_KILL_PROCESS);
    load(offsetof(seccomp_data, nr));
    emit(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
    ret(SECCOMP_RET_KILL_PROCESS);
  }

  // nr == rule.number && every condition -> rule.action; otherwise fall through to the next rule.
  void add(const rule& r) {
    std::array<std::pair<std::size_t, bool>, 8> to_end{};  // (instruction, its jt?) jumping past the rule
    std::size_t fixups = 0;
    load(offsetof(seccomp_data, nr));
    to_end[fixups++] = {length_, false};
    emit(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(r.number), 0, 0));
    for (std::uint8_t i = 0; i < r.condition_count; ++i) {
      const condition& c = r.conditions[i];
      const auto value = static_cast<std::uint32_t>(c.value);
      switch (c.kind) {
        case test::arg_eq:
          load(arg_low(c.arg));
          to_end[fixups++] = {length_, false};
          emit(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, 0, 0));
          break;
        case test::arg_ne:
          load(arg_low(c.arg));
          to_end[fixups++] = {length_, true};
          emit(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, 0, 0));
          break;
        case test::arg_lacks_bits:
          load(arg_low(c.arg));
          to_end[fixups++] = {length_, true};
          emit(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, value, 0, 0));
          break;
        case test::arg_at_most:
          load(arg_low(c.arg));
          to_end[fixups++] = {length_, true};
          emit(BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, value, 0, 0));
          break;
        case test::arg_nonzero:  // all 64 bits: a low word of 0 does not hide a pointer
          load(arg_low(c.arg));
          emit(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2));
          load(arg_low(c.arg) + 4);
          to_end[fixups++] = {length_, true};
          emit(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0));
          break;
        case test::ip_ne:  // low words differ -> holds; else the high words decide
          load(ip_low);
          emit(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, 0, 2));
          load(ip_low + 4);
          to_end[fixups++] = {length_, true};
          emit(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(c.value >> 32), 0, 0));
          break;
      }
    }
    ret(r.action);
    for (std::size_t i = 0; i < fixups; ++i) {
      const auto [at, on_true] = to_end[i];
      if (at >= length_) continue;
      const auto offset = static_cast<std::uint8_t>(length_ - at - 1);
      (on_true ? code_[at].jt : code_[at].jf) = offset;
    }
  }

  // Installs the program (ALLOW when no rule fired). NO_NEW_PRIVS lets an unprivileged process
  // install it, and keeps it across exec.
  bool install() {
    ret(SECCOMP_RET_ALLOW);
    if (overflow_) return false;
    sock_fprog program{static_cast<unsigned short>(length_), code_.data()};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
    return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) == 0;
  }

 private:
  void emit(sock_filter instruction) {
    if (length_ >= code_.size()) {
      overflow_ = true;
      return;
    }
    code_[length_++] = instruction;
  }

  std::array<sock_filter, 400> code_{};
  std::size_t length_ = 0;
  bool overflow_ = false;
};

rule deny(long number, denial kind) { return rule{number, trap(kind), {}, 0}; }
rule deny_if(long number, denial kind, condition c) { return rule{number, trap(kind), {c}, 1}; }
rule deny_if(long number, denial kind, condition a, condition b) { return rule{number, trap(kind), {a, b}, 2}; }

// Deny the call when its pid-like argument names a process other than this one (0 is itself).
void deny_other_pid(filter_program& program, long number, std::uint8_t arg, denial kind, pid_t self,
                    bool zero_is_self = true) {
  const condition not_self{test::arg_ne, arg, static_cast<std::uint32_t>(self)};
  if (zero_is_self) {
    program.add(deny_if(number, kind, {test::arg_ne, arg, 0}, not_self));
  } else {
    program.add(deny_if(number, kind, not_self));
  }
}

// The label sits right after the one `syscall` instruction stage 2 lets write to the channel;
// the kernel reports that return address as the call's instruction pointer.
extern "C" const char aisp_reply_syscall_return[];

[[gnu::noinline]] long reply_syscall(int fd, const void* bytes, std::size_t count) {
  long result = SYS_write;
  asm volatile(
      "syscall\n"
      ".globl aisp_reply_syscall_return\n"
      "aisp_reply_syscall_return:\n"
      : "+a"(result)
      : "D"(static_cast<long>(fd)), "S"(bytes), "d"(count)
      : "rcx", "r11", "memory");
  return result;
}

// A trapped call returns EPERM to its caller and is counted by kind.
void on_denied_call(int, siginfo_t* info, void* context) {
  const auto kind = static_cast<std::size_t>(info->si_errno);
  if (kind < denied.size()) denied[kind].fetch_add(1, std::memory_order_relaxed);
  auto* registers = static_cast<ucontext_t*>(context);
  registers->uc_mcontext.gregs[REG_RAX] = -EPERM;
}

#endif  // __x86_64__

}  // namespace

#if defined(__x86_64__)

bool confine_before_exec(pid_t self, bool allow_processes) {
  filter_program program;
  program.prologue();
  if (!allow_processes) {
    program.add(deny_if(SYS_clone, denial::new_process, {test::arg_lacks_bits, 0, CLONE_THREAD}));
    // clone3 hides its flags behind a pointer: ENOSYS makes glibc fall back to clone for threads.
    program.add(rule{SYS_clone3, SECCOMP_RET_ERRNO | ENOSYS, {}, 0});
    program.add(deny(SYS_fork, denial::new_process));
    program.add(deny(SYS_vfork, denial::new_process));
  }
  for (const long number : {SYS_kill, SYS_tkill, SYS_tgkill, SYS_rt_sigqueueinfo, SYS_rt_tgsigqueueinfo}) {
    deny_other_pid(program, number, 0, denial::signal_other, self, false);
  }
  for (const long number : {SYS_pidfd_open, SYS_pidfd_send_signal, SYS_pidfd_getfd}) program.add(deny(number, denial::signal_other));
  for (const long number : {SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev}) program.add(deny(number, denial::trace_other));
  for (const long number : {SYS_migrate_pages, SYS_move_pages}) deny_other_pid(program, number, 0, denial::trace_other, self);
  program.add(deny_if(SYS_setpriority, denial::renice_other, {test::arg_ne, 0, PRIO_PROCESS}));
  deny_other_pid(program, SYS_setpriority, 1, denial::renice_other, self);
  program.add(deny_if(SYS_ioprio_set, denial::renice_other, {test::arg_ne, 0, IOPRIO_WHO_PROCESS}));
  deny_other_pid(program, SYS_ioprio_set, 1, denial::renice_other, self);
  deny_other_pid(program, SYS_prlimit64, 0, denial::renice_other, self);
  for (const long number : {SYS_sched_setaffinity, SYS_sched_setscheduler, SYS_sched_setparam, SYS_sched_setattr}) {
    deny_other_pid(program, number, 0, denial::repin_other, self);
  }
  // Note [slow worker clock]: the hardware counter the judge checks the worker's clock against
  // could be made to fault and be answered by a handler of the variant's (static initializers
  // included, hence here).
  program.add(deny_if(SYS_prctl, denial::timestamp_counter, {test::arg_eq, 0, PR_SET_TSC}));
  // Note [sampled worker]: a perf event opened by the variant (a software clock sampling every
  // 25 us) has the kernel interrupt every timed call of its worker, with no thread, timer or
  // signal to show for it: a red team's baseline read 1.9x (2.1x in Python) slower for its own
  // code (round nine, 2026-12-05). No variant needs one; the harness opens none.
  program.add(deny(SYS_perf_event_open, denial::perf_event));
  // Note [speculation controls]: PR_SET_SPECULATION_CTRL turns a speculation mitigation on for
  // the calling thread (speculative store bypass disabled: every load waits for older stores'
  // addresses), a tax on a baseline's own calls that no probe reads, as a perf event's is (red
  // team seventeen found the prctl allowed, 2026-12-05; this host has no control to test it on).
  // The harness never sets one; reading them (PR_GET_) stays allowed.
  program.add(deny_if(SYS_prctl, denial::speculation_control, {test::arg_eq, 0, PR_SET_SPECULATION_CTRL}));
  // Note [refused huge pages]: madvise(MADV_NOHUGEPAGE) on a variant's own memory, or
  // PR_SET_THP_DISABLE for the whole worker, keeps its buffers in 4 KiB pages: a TLB miss and a
  // fault where a huge page had one, a tax on a baseline's own calls that no probe read (red team
  // seventeen named it, 2026-12-05). The harness asks for neither; MADV_HUGEPAGE stays allowed.
  program.add(deny_if(SYS_madvise, denial::huge_pages, {test::arg_eq, 2, MADV_NOHUGEPAGE}));
  program.add(deny_if(SYS_prctl, denial::huge_pages, {test::arg_eq, 0, PR_SET_THP_DISABLE}));
  return program.install();
}

std::string confine_worker(int reply_fd, bool allow_exec) {
  struct sigaction action {};
  action.sa_sigaction = on_denied_call;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGSYS, &action, nullptr) != 0) return std::string("sigaction(SIGSYS): ") + std::strerror(errno);
  // Siblings of one user may otherwise open this worker's /proc/<pid>/mem and fds.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return std::string("PR_SET_DUMPABLE: ") + std::strerror(errno);
  const auto fd = static_cast<std::uint32_t>(reply_fd);
  const auto gate = reinterpret_cast<std::uint64_t>(&aisp_reply_syscall_return[0]);
  filter_program program;
  program.prologue();
  if (!allow_exec) {
    program.add(deny(SYS_execve, denial::exec));
    program.add(deny(SYS_execveat, denial::exec));
  }
  for (const long number : {SYS_write, SYS_writev, SYS_pwrite64, SYS_pwritev, SYS_pwritev2, SYS_sendto, SYS_sendmsg,
                            SYS_sendmmsg, SYS_sendfile, SYS_vmsplice}) {
    program.add(deny_if(number, denial::channel_write, {test::arg_eq, 0, fd}, {test::ip_ne, 0, gate}));
  }
  program.add(deny_if(SYS_splice, denial::channel_write, {test::arg_eq, 2, fd}));
  program.add(deny_if(SYS_tee, denial::channel_write, {test::arg_eq, 1, fd}));
  program.add(deny_if(SYS_copy_file_range, denial::channel_write, {test::arg_eq, 2, fd}));
  program.add(deny(SYS_io_uring_setup, denial::channel_write));
  program.add(deny_if(SYS_dup, denial::channel_copy, {test::arg_eq, 0, fd}));
  for (const long number : {SYS_dup2, SYS_dup3}) {
    program.add(deny_if(number, denial::channel_copy, {test::arg_eq, 0, fd}));
    program.add(deny_if(number, denial::channel_copy, {test::arg_eq, 1, fd}));
  }
  program.add(deny_if(SYS_fcntl, denial::channel_copy, {test::arg_eq, 0, fd}, {test::arg_eq, 1, F_DUPFD}));
  program.add(deny_if(SYS_fcntl, denial::channel_copy, {test::arg_eq, 0, fd}, {test::arg_eq, 1, F_DUPFD_CLOEXEC}));
  // A process about to exec, with every signal blocked (where a trap kills it), closes every
  // descriptor from 3 up and resets every handler, ours too (Python's subprocess). Closing the
  // channel only costs the pair its verdict, and a replaced handler only hides the count of calls
  // that stay denied, so a worker allowed to run programs may (Note [compilers in the sandbox]).
  if (!allow_exec) {
    program.add(deny_if(SYS_close, denial::channel_copy, {test::arg_eq, 0, fd}));
    program.add(deny_if(SYS_close_range, denial::channel_copy, {test::arg_at_most, 0, fd}));
    // Reading the handler (no new action) is harmless: Python's signal module reads every one.
    program.add(deny_if(SYS_rt_sigaction, denial::sigsys_handler, {test::arg_eq, 0, SIGSYS}, {test::arg_nonzero, 1, 0}));
  }
  program.add(deny_if(SYS_prctl, denial::dumpable, {test::arg_eq, 0, PR_SET_DUMPABLE}));
  if (!program.install()) return std::string("seccomp: ") + std::strerror(errno);
  return "";
}

#else

bool confine_before_exec(pid_t, bool) { return false; }
std::string confine_worker(int, bool) { return "the sandbox's filters are written for x86-64 only"; }
static long reply_syscall(int fd, const void* bytes, std::size_t count) {
  const ssize_t written = write(fd, bytes, count);
  return written < 0 ? -errno : written;
}

#endif

bool write_reply(int reply_fd, const void* bytes, std::size_t count) {
  const auto* next = static_cast<const char*>(bytes);
  while (count > 0) {
    const long written = reply_syscall(reply_fd, next, count);
    if (written == -EINTR) continue;
    if (written <= 0) return false;
    next += written;
    count -= static_cast<std::size_t>(written);
  }
  return true;
}

std::vector<denial_count> denials_so_far() {
  std::vector<denial_count> found;
  for (std::size_t kind = 1; kind < denied.size(); ++kind) {
    if (const auto count = denied[kind].load(std::memory_order_relaxed); count > 0)
      found.push_back({static_cast<denial>(kind), count});
  }
  return found;
}

bool killed_by_sandbox(int signal) { return signal == SIGSYS; }

}  // namespace aisp::sandbox
