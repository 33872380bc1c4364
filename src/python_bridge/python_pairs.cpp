// Note [python bridge]: `aisp bench run --python FILE` loads this plugin (lib/aisp/libaisp_python.so)
// like any other, in the judge and in every worker. It embeds the user's Python (the libpython
// the CLI found for the interpreter, python_runtime.cpp), imports the pair file through the aisp
// package (python/aisp), and registers one C++ pair per Python pair. The judge is unchanged:
// its references, sizes and work call into Python; a worker's variant calls into Python with
// views of the harness's own buffers (the user never allocates an input or an output), on the
// harness's stream (torch.cuda.ExternalStream). Everything else (timing, verification, the
// battery, the noise twin, the audit, the sandbox) is the C++ pairs' own code.
#include <cstdint>
#include <map>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "aisp/pair.hpp"
#include "aisp/registry.hpp"
#include "bridge_common/declared_pair.hpp"
#include "harness/plugin_loader.hpp"
#include "harness/worker_state.hpp"
#include "python_bridge/python_runtime.hpp"
#include "python_bridge/python_state_watch.hpp"

namespace aisp::python {
namespace {

using nlohmann::json;

using bridge::declared_buffer;
using bridge::shape_of;
using bridge::sizes_of;

// A variant bound to the buffers it was last given: bound again when the harness moves them.
struct binding {
  long long key = 0;
  std::vector<std::uintptr_t> addresses;
};

long long next_key() {
  static std::int64_t counter = 0;
  return static_cast<long long>(++counter);
}

std::vector<std::uintptr_t> addresses_of(const std::vector<declared_buffer>& buffers, run_context& ctx) {
  std::vector<std::uintptr_t> addresses;
  addresses.reserve(buffers.size() + 1);
  for (const auto& buffer : buffers) addresses.push_back(reinterpret_cast<std::uintptr_t>(ctx.buffer(buffer.name)));
  addresses.push_back(reinterpret_cast<std::uintptr_t>(ctx.stream()));
  return addresses;
}

void bind(binding& bound, int pair_index, int variant_index, const std::vector<declared_buffer>& buffers, run_context& ctx) {
  json request = {{"sizes", sizes_of(ctx.work())}, {"stream", reinterpret_cast<std::uintptr_t>(ctx.stream())}};
  for (const auto& buffer : buffers) {
    request["buffers"][buffer.name] = {reinterpret_cast<std::uintptr_t>(ctx.buffer(buffer.name)), ctx.num_elements(buffer.name),
                                       std::string(dtype_name(ctx.buffer_type(buffer.name))), shape_of(buffer, ctx.work(), 1)};
  }
  call("bind", "(Liis)", bound.key, pair_index, variant_index, request.dump().c_str());
  bound.addresses = addresses_of(buffers, ctx);
}

binding& bound_for(run_context& ctx, int pair_index, int variant_index, const std::vector<declared_buffer>& buffers) {
  auto*& state = reinterpret_cast<binding*&>(ctx.user_state());
  if (state == nullptr) {
    state = new binding{next_key(), {}};
    bind(*state, pair_index, variant_index, buffers, ctx);
  } else if (state->addresses != addresses_of(buffers, ctx)) {
    bind(*state, pair_index, variant_index, buffers, ctx);  // readdressed (the harness moved the buffers)
  }
  return *state;
}

variant python_variant(const json& declared, int pair_index, int variant_index, const std::vector<declared_buffer>& buffers) {
  variant v;
  v.name = declared.at("name").get<std::string>();
  v.summary = declared.value("summary", "");
  v.host_threads = declared.value("threads", 0);  // Note [declared threads used]
  const auto unit = declared.value("math", std::string("fp32_simt"));
  for (const auto candidate : {math_unit::fp32_simt, math_unit::tf32_tensor, math_unit::fp16_tensor, math_unit::bf16_tensor,
                               math_unit::fp8_tensor})
    if (math_unit_name(candidate) == unit) v.math = candidate;
  bridge::declare_precision(v, declared, "variant " + v.name);
  v.setup = [=](run_context& ctx) { call("setup", "(L)", bound_for(ctx, pair_index, variant_index, buffers).key); };
  v.run = [=](run_context& ctx) { call("run", "(L)", bound_for(ctx, pair_index, variant_index, buffers).key); };
  v.teardown = [](run_context& ctx) {
    auto*& state = reinterpret_cast<binding*&>(ctx.user_state());
    if (state == nullptr) return;
    const long long key = state->key;
    delete state;
    state = nullptr;
    call("teardown", "(L)", key);
  };
  return v;
}

pair python_pair(const json& declared) {
  const int index = declared.at("index").get<int>();
  pair p(declared.at("target").get<std::string>());
  const std::vector<declared_buffer> buffers = bridge::declare_common(p, declared);
  p.work([index](const workload& work) {
    const auto amount = json::parse(call("work", "(is)", index, sizes_of(work).dump().c_str()));
    return work_amount{.bytes = amount.at("bytes").get<double>(), .flops = amount.value("flops", 0.0)};
  });
  p.reference([index, buffers](reference_io& io) {
    json request = {{"sizes", sizes_of(io.work())}};
    for (const auto& buffer : buffers) {
      const double* data = buffer.is_output ? io.output(buffer.name).data() : io.input(buffer.name).data();
      const std::size_t count = buffer.is_output ? io.output(buffer.name).size() : io.input(buffer.name).size();
      request["buffers"][buffer.name] = {reinterpret_cast<std::uintptr_t>(data), count, "f64",
                                         shape_of(buffer, io.work(), io.world_size())};
    }
    call("reference", "(is)", index, request.dump().c_str());
  });
  p.tag("python");
  // Note [compilers in the sandbox]: the judge reads this tag to start the workers able to spawn.
  if (const auto reason = declared.value("subprocesses", std::string()); !reason.empty()) p.tag(std::string(subprocess_tag_prefix) + reason);
  if (const auto reason = declared.value("switches", std::string()); !reason.empty()) p.tag(std::string(switches_tag_prefix) + reason);
  int variant_index = 0;
  for (const auto& v : declared.at("variants")) p.add_variant(python_variant(v, index, variant_index++, buffers));
  return p;
}

// Every pair file named in $AISP_PYTHON_PAIRS (':'-separated), registered; "" or the error.
std::string register_python_pairs() {
  if (auto error = start(); !error.empty()) return error;
  if (auto error = keep_state_watch(); !error.empty()) return error;  // before any pair file is imported
  const char* files = std::getenv("AISP_PYTHON_PAIRS");
  if (files == nullptr || *files == '\0') return "AISP_PYTHON_PAIRS is not set: run Python pairs with aisp bench run --python FILE";
  std::stringstream list(files);
  for (std::string file; std::getline(list, file, ':');) {
    if (file.empty()) continue;
    try {
      const auto declared = json::parse(call("load", "(s)", file.c_str()));
      for (const auto& p : declared.at("pairs")) {
        auto made = python_pair(p);
        made.validate();  // the pair file's name in the message, not the bridge's
        registry::instance().add(std::move(made));
      }
    } catch (const std::exception& error) {
      return file + ": " + error.what();
    }
  }
  return "";
}

}  // namespace
}  // namespace aisp::python

// Called by the plugin loader once the ABI matched: registers the pair files' pairs, or says in
// one line why it could not (Note [plugins] in src/harness/plugin_loader.cpp).
extern "C" __attribute__((visibility("default"))) const char* aisp_plugin_register() {
  static std::string error;
  error = aisp::python::register_python_pairs();
  // Note [worker state]: torch's backend switches, read by the worker outside timed windows.
  if (error.empty()) {
    aisp_register_state_probe("torch", [] { return aisp::python::read_watched_state("torch"); });
    aisp_register_state_probe("python", [] { return aisp::python::read_watched_state("python"); });
    aisp_register_state_probe("torch_settings", [] { return aisp::python::read_watched_state("torch_settings"); });
  }
  return error.empty() ? nullptr : error.c_str();
}
