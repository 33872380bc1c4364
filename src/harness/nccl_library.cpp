#include <dlfcn.h>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "aisp/library_loading.hpp"
#include "aisp/nccl.hpp"

namespace aisp {
namespace {

struct loaded_nccl {
  nccl_api api;
  std::string why;  // "" when every entry point resolved
};

template <class Fn>
bool resolve(void* library, const char* name, Fn& into, std::string& why) {
  into = reinterpret_cast<Fn>(dlsym(library, name));
  if (into == nullptr && why.empty()) why = fmt::format("libnccl has no {}", name);
  return into != nullptr;
}

loaded_nccl load() {
  loaded_nccl loaded;
  std::vector<std::string> candidates;
  add_library_candidates(candidates, "libnccl.so.2");
  const auto opened = open_first_library(candidates, RTLD_NOW);
  if (opened.handle == nullptr) {
    loaded.why = "NCCL is not available: " + opened.first_error;
    return loaded;
  }
  auto& a = loaded.api;
  std::string& why = loaded.why;
  resolve(opened.handle, "ncclGetUniqueId", a.get_unique_id, why);
  resolve(opened.handle, "ncclCommInitRank", a.comm_init_rank, why);
  resolve(opened.handle, "ncclCommDestroy", a.comm_destroy, why);
  resolve(opened.handle, "ncclCommAbort", a.comm_abort, why);
  resolve(opened.handle, "ncclAllReduce", a.all_reduce, why);
  resolve(opened.handle, "ncclReduceScatter", a.reduce_scatter, why);
  resolve(opened.handle, "ncclAllGather", a.all_gather, why);
  resolve(opened.handle, "ncclBroadcast", a.broadcast, why);
  resolve(opened.handle, "ncclSend", a.send, why);
  resolve(opened.handle, "ncclRecv", a.recv, why);
  resolve(opened.handle, "ncclGroupStart", a.group_start, why);
  resolve(opened.handle, "ncclGroupEnd", a.group_end, why);
  resolve(opened.handle, "ncclGetErrorString", a.error_string, why);
  return loaded;
}

const loaded_nccl& library() {
  static const loaded_nccl loaded = load();  // once per process
  return loaded;
}

}  // namespace

const nccl_api* nccl_or_null(std::string& why) {
  const auto& loaded = library();
  why = loaded.why;
  return loaded.why.empty() ? &loaded.api : nullptr;
}

const nccl_api& nccl() {
  std::string why;
  const nccl_api* api = nccl_or_null(why);
  AISP_EXPECTS(api != nullptr, why);
  return *api;
}

ncclComm_t nccl_comm(const run_context& ctx) {
  AISP_EXPECTS(ctx.communicator() != nullptr, "no NCCL communicator: the pair declares world size 1");
  return static_cast<ncclComm_t>(ctx.communicator());
}

void throw_nccl_error(ncclResult_t code, const char* expression, const char* file, int line) {
  const auto& loaded = library();
  const char* text = loaded.why.empty() ? loaded.api.error_string(code) : "?";
  throw std::runtime_error(fmt::format("{}:{}: {} failed: NCCL error {} ({})", file, line, expression, static_cast<int>(code),
                                       text != nullptr ? text : "?"));
}

}  // namespace aisp
