// Planted cheats that act before main(), in a static initializer of a pair file: the worker's
// sandbox must already hold (Note [worker sandbox]). Every process of aisp_cheats runs this
// initializer, so it acts only in workers and only when AISP_PLANT_STATIC_CHEAT names a cheat;
// own_process_cheats_test.cpp sets it for one run each. The pair itself is honest.
// Run: AISP_PLANT_STATIC_CHEAT=fork aisp_cheats bench run --targets cheats_static
//      AISP_PLANT_STATIC_CHEAT=cupti aisp_cheats bench run --targets cheats_static_gpu (a GPU)
#include <cupti.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// argv[1] of this process is "worker" (the judge starts workers as `<binary> worker`).
bool in_a_worker() {
  const int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[4096] = {};
  const ssize_t got = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (got <= 0) return false;
  const char* second = text + std::strlen(text) + 1;
  return second < text + got && std::strcmp(second, "worker") == 0;
}

struct planted_before_main {
  planted_before_main() {
    const char* which = std::getenv("AISP_PLANT_STATIC_CHEAT");
    if (which == nullptr || !in_a_worker()) return;
    if (std::strcmp(which, "fork") == 0) {  // L5: a helper process before the sandbox's handler
      if (fork() == 0) _exit(0);
    } else if (std::strcmp(which, "signal") == 0) {  // V1: signal the judge
      kill(getppid(), SIGCONT);
    } else if (std::strcmp(which, "thread") == 0) {  // L5: a thread no probe around run() sees
      std::thread([] {
        for (;;) pause();
      }).detach();
    } else if (std::strcmp(which, "cupti") == 0) {  // T1: take the CUPTI subscription the audit needs
      CUpti_SubscriberHandle taken = nullptr;
      cuptiSubscribe(&taken, [](void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}, nullptr);
    } else if (std::strcmp(which, "dup") == 0) {  // V1: a copy of the judge's channel (fd 1)
      const int copy = dup(STDOUT_FILENO);
      keep_alive(&copy);
    }
  }
};
const planted_before_main planted;

pair honest_pair() {
  pair declared = elementwise_declaration("cheats_static:honest_affine", "L5");
  declared.summary("an honest pair whose file plants a static-initializer cheat on request")
      .add_variant(honest_baseline())
      .add_variant(variant{"optimized", "the same honest loop", honest_run(affine_math), {}, {}, {}, {}, {}, {}, {}});
  return declared;
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::honest_pair());
