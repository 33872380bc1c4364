// NCCL for multi-GPU pairs (Note [ranks] in aisp/run_context.hpp), loaded at run time: aisp
// never links libnccl, so a machine without it still runs every single-GPU pair, and a
// multi-GPU pair there is skipped with the reason. The entry points keep nccl.h's types.
#pragma once

#include <nccl.h>

#include <string>

#include "aisp/run_context.hpp"

namespace aisp {

struct nccl_api {
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclCommAbort) comm_abort = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
};

// The loaded library; nullptr with `why` where libnccl.so.2 or an entry point is missing.
[[nodiscard]] const nccl_api* nccl_or_null(std::string& why);
// The loaded library; throws contract_error where it is missing.
[[nodiscard]] const nccl_api& nccl();
// The communicator the harness made for this rank (throws when there is none: world size 1).
[[nodiscard]] ncclComm_t nccl_comm(const run_context& ctx);

[[noreturn]] void throw_nccl_error(ncclResult_t code, const char* expression, const char* file, int line);

}  // namespace aisp

#define AISP_NCCL_CHECK(expr)                                             \
  do {                                                                    \
    const ncclResult_t aisp_nccl_status_ = (expr);                        \
    if (aisp_nccl_status_ != ncclSuccess) {                               \
      ::aisp::throw_nccl_error(aisp_nccl_status_, #expr, __FILE__, __LINE__); \
    }                                                                     \
  } while (0)
