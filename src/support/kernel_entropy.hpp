// Note [verified after the call]: which timed samples the judge verifies is decided after each
// sample, in the worker, from the kernel's entropy: a variant runs in the worker's process and
// can read anything it holds (the request buffered on its stdin named the verified sample, and a
// planted cheat read it: cheats:x7_reads_the_request_from_stdin), but not bits drawn after its
// call returned. So are the probe positions, and whether a visit runs under the device audit
// (drawn as it starts; the request said "audit":true too). A verified sample's record leaves the
// process the moment it is taken, a line of its own ahead of the answer (runner/worker_process.hpp),
// so no later call can rewrite its probes in the worker's memory. The draw goes through this
// file's own system-call instruction, not libc's getrandom: code in the process can patch the
// binary's GOT (red team three did in the judge), not this instruction's result. What is left:
// code that patches the worker's own instructions, or forges its answers through its reply
// function (Note [worker sandbox]).
#pragma once

#include <cstdint>

namespace aisp {

// 64 bits from the kernel's CSPRNG (getrandom), drawn now.
[[nodiscard]] std::uint64_t kernel_entropy();

// True with probability `chance` (clamped to [0, 1]) for a uniform 64-bit `draw`.
[[nodiscard]] bool drawn_with_chance(std::uint64_t draw, double chance);

}  // namespace aisp
