// Where a live process's threads wait, read from Linux's /proc, for the message of a worker that
// stopped answering: "main thread in futex_wait_queue; 7 threads: 5 in futex_wait_queue, 2
// running". A worker spinning in a synchronize on a kernel that never ends reads "running"; one
// blocked in the driver names the driver's wait. "" where /proc says nothing.
#pragma once

#include <sys/types.h>

#include <string>

namespace aisp {

[[nodiscard]] std::string thread_waits(pid_t pid);

}  // namespace aisp
