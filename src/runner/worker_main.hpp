// The worker side of the judge-worker protocol (`aisp worker`, hidden from --help).
#pragma once

namespace aisp {

// Serves requests on stdin until "exit" or end of input. Returns the process exit code.
int run_worker();

}  // namespace aisp
