// Note [executable pairs]: `aisp bench run --exec FILE.json` loads this plugin
// (lib/aisp/libaisp_exec.so) like any other, in the judge and in every worker, and registers the
// file's pairs: declared in JSON (sizes, buffers, tolerance, work, goal), their variants and
// fp64 reference given as commands. A variant is a process the worker starts in setup() and
// keeps for its calls: run() sends {"op":"run"} and returns on the reply. The harness still owns
// every buffer (Note [shared host buffers]): the process maps the worker's memfds, so fresh
// inputs, output fills, digests, verification, the battery and the late-write checks are the
// C++ pairs' own code, and the protocol is three requests (docs/worker_protocol.md,
// "Executable variants"). The reference runs the same way in the judge on float64 buffers.
// Host pairs only: a GPU process would need the harness's device buffers and stream
// (CUDA IPC), not built.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "aisp/pair.hpp"
#include "aisp/registry.hpp"
#include "bridge_common/declared_pair.hpp"
#include "exec_bridge/exec_process.hpp"
#include "harness/plugin_loader.hpp"
#include "harness/shared_host_memory.hpp"
#include "support/python_interpreter.hpp"
#include "support/readable_error.hpp"

namespace aisp::exec {
namespace {

using bridge::declared_buffer;
using nlohmann::json;
namespace fs = std::filesystem;

constexpr int protocol_version = 1;

// A command's words, "{python}" replaced by the interpreter --python uses: a pair file written
// with it runs under the Python that has the user's packages.
std::vector<std::string> expanded(std::vector<std::string> command) {
  for (auto& word : command)
    if (word == "{python}") word = python_interpreter();
  return command;
}

// A program's words: a non-empty list of strings at `name` (Note [declared fields]).
std::vector<std::string> command_of(const json& declared, const std::string& where, const std::string& name = "command") {
  const auto at = where.empty() ? name : where + "." + name;
  auto words = bridge::texts_of(bridge::field_of(declared, where, name), at);
  if (words.empty()) bridge::wrong_field(at, "a program and its arguments, as [\"./variant\"]", json::array());
  return words;
}

// A buffer as the process maps it: its type and length.
struct buffer_extent {
  dtype type;
  std::int64_t elements;
};

// The setup request: the sizes, the variant, and each buffer on its descriptor (10, 11, ...).
std::string setup_request(const std::string& variant, const workload& work, const std::vector<declared_buffer>& buffers,
                          const std::vector<buffer_extent>& extents) {
  json request = {{"op", "setup"}, {"protocol", protocol_version}, {"variant", variant}, {"sizes", bridge::sizes_of(work)}};
  request["buffers"] = json::array();
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    request["buffers"].push_back({{"name", buffers[i].name}, {"role", buffers[i].is_output ? "output" : "input"},
                                  {"dtype", dtype_name(extents[i].type)}, {"shape", bridge::shape_of(buffers[i], work, 1)},
                                  {"elements", extents[i].elements},
                                  {"bytes", static_cast<std::size_t>(extents[i].elements) * dtype_size(extents[i].type)},
                                  {"fd", first_buffer_fd + static_cast<int>(i)}});
  }
  return request.dump();
}

[[nodiscard]] variant exec_variant(const json& declared, const std::string& where, const std::string& directory,
                                   const std::vector<declared_buffer>& buffers) {
  bridge::refuse_unknown_fields(declared, {"name", "summary", "command", "threads", "precision", "tolerance"}, where);
  variant v;
  v.name = bridge::text_of(bridge::field_of(declared, where, "name"), where + ".name");
  v.summary = declared.is_object() && declared.contains("summary") ? bridge::text_of(declared["summary"], where + ".summary") : "";
  v.host_threads = bridge::threads_field(declared, where);
  bridge::declare_precision(v, declared, where);
  const auto command = expanded(command_of(declared, where));
  v.setup = [command, directory, buffers, name = v.name](run_context& ctx) {
    auto*& state = reinterpret_cast<exec_process*&>(ctx.user_state());
    delete state;  // setup again: the harness moved the buffers (the new-address challenge)
    state = nullptr;
    std::vector<int> fds;
    std::vector<buffer_extent> extents;
    for (const auto& buffer : buffers) {
      const int fd = aisp_host_buffer_fd(ctx.buffer(buffer.name));
      if (fd < 0) throw std::runtime_error("buffer " + buffer.name + " is not in shared memory (Note [shared host buffers])");
      fds.push_back(fd);
      extents.push_back({ctx.buffer_type(buffer.name), ctx.num_elements(buffer.name)});
    }
    state = new exec_process(command, directory, fds);
    state->request(setup_request(name, ctx.work(), buffers, extents));
  };
  v.run = [](run_context& ctx) { reinterpret_cast<exec_process*>(ctx.user_state())->run(); };
  v.teardown = [](run_context& ctx) {
    auto*& state = reinterpret_cast<exec_process*&>(ctx.user_state());
    delete state;
    state = nullptr;
  };
  return v;
}

// float64 copies of the buffers in memfds, for the reference's process.
struct f64_buffers {
  std::vector<void*> data;
  std::vector<std::size_t> counts;
  ~f64_buffers() {
    for (void* p : data) release_shared_host(p);
  }
};

void run_reference(const std::vector<std::string>& command, const std::string& directory, const std::vector<declared_buffer>& buffers,
                   reference_io& io) {
  f64_buffers copies;
  std::vector<int> fds;
  for (const auto& buffer : buffers) {
    const std::size_t count = buffer.is_output ? io.output(buffer.name).size() : io.input(buffer.name).size();
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    void* data = allocate_shared_host((std::max<std::size_t>(count * sizeof(double), 1) + page - 1) / page * page);
    copies.data.push_back(data);
    copies.counts.push_back(count);
    if (!buffer.is_output) std::memcpy(data, io.input(buffer.name).data(), count * sizeof(double));
    fds.push_back(shared_host_fd(data));
  }
  std::vector<buffer_extent> extents;
  for (const std::size_t count : copies.counts) extents.push_back({dtype::f64, static_cast<std::int64_t>(count)});
  exec_process process(command, directory, fds);
  process.request(setup_request("reference", io.work(), buffers, extents));
  process.run();
  for (std::size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].is_output) std::memcpy(io.output(buffers[i].name).data(), copies.data[i], copies.counts[i] * sizeof(double));
}

// "work": {"bytes": [[coefficient, dim, dim, ...], ...], "flops": [...]}: sums of products of sizes.
struct work_term {
  double coefficient;
  std::vector<std::string> dims;
};

// A work sum's terms, each checked as the file is read (Note [declared fields]): a term of the
// wrong shape is an error naming it, not a JSON type error when the first call is counted.
std::vector<work_term> terms_of(const json& terms, const std::string& where, const std::vector<std::string>& sizes) {
  std::vector<work_term> out;
  for (std::size_t i = 0; const auto& term : bridge::list_of(terms, where)) {
    const auto at = where + "[" + std::to_string(i++) + "]";
    if (!term.is_array() || term.empty() || !term[0].is_number())
      bridge::wrong_field(at, "a list of a coefficient and size names, as [2, \"n\"]", term);
    work_term t{term[0].get<double>(), {}};
    if (!std::isfinite(t.coefficient) || t.coefficient < 0) bridge::wrong_field(at + "[0]", "a finite number of 0 or more", term[0]);
    for (std::size_t d = 1; d < term.size(); ++d) {
      const auto name = bridge::text_of(term[d], at + "[" + std::to_string(d) + "]");
      if (std::find(sizes.begin(), sizes.end(), name) == sizes.end())
        bridge::wrong_field(at + "[" + std::to_string(d) + "]", "a size of sizes.benchmark", term[d]);
      t.dims.push_back(name);
    }
    out.push_back(std::move(t));
  }
  return out;
}

double amount_of(const std::vector<work_term>& terms, const workload& work) {
  double total = 0;
  for (const auto& term : terms) {
    double product = term.coefficient;
    for (const auto& dim : term.dims) product *= static_cast<double>(work.get(dim));
    total += product;
  }
  return total;
}

pair exec_pair(const json& declared, const std::string& directory) {
  bridge::refuse_unknown_fields(declared, {"target", "summary", "backend", "sizes", "buffers", "work", "reference", "variants", "tolerance",
                                           "goal", "exact_math", "fixed_inputs", "threads", "threads_reason"}, "");
  if (declared.contains("buffers") && declared["buffers"].is_array()) {
    for (std::size_t i = 0; const auto& buffer : declared["buffers"])
      bridge::refuse_unknown_fields(buffer, {"name", "role", "dtype", "dims", "init"}, "buffers[" + std::to_string(i++) + "]");
  }
  pair p(bridge::text_of(bridge::field_of(declared, "", "target"), "target"));
  const std::vector<declared_buffer> buffers = bridge::declare_common(p, declared);
  if (p.where() != backend::host) throw std::runtime_error(p.target() + ": executable pairs run on the host (\"backend\": \"host\")");
  const json& work = bridge::field_of(declared, "", "work");
  std::vector<std::string> sizes;
  for (const auto& [name, _] : declared["sizes"]["benchmark"].items()) sizes.push_back(name);
  const auto bytes = terms_of(bridge::field_of(work, "work", "bytes"), "work.bytes", sizes);
  const auto flops = work.contains("flops") ? terms_of(work["flops"], "work.flops", sizes) : std::vector<work_term>{};
  p.work([bytes, flops](const workload& w) { return work_amount{.bytes = amount_of(bytes, w), .flops = amount_of(flops, w)}; });
  const auto reference = expanded(command_of(declared, "", "reference"));
  p.reference([reference, directory, buffers](reference_io& io) { run_reference(reference, directory, buffers, io); });
  p.tag("exec");
  // Note [compilers in the sandbox]: its workers start the variants' processes.
  p.tag(std::string(subprocess_tag_prefix) + "its variants are executables (Note [executable pairs])");
  for (std::size_t i = 0; const auto& v : bridge::list_of(bridge::field_of(declared, "", "variants"), "variants"))
    p.add_variant(exec_variant(v, "variants[" + std::to_string(i++) + "]", directory, buffers));
  return p;
}

// Every pair file named in $AISP_EXEC_PAIRS (':'-separated), registered; "" or the error.
std::string register_exec_pairs() {
  // A process that dies must fail its request, not end the worker with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  // One core a variant, as the harness times host pairs: libraries' thread pools stay at 1.
  for (const char* name : {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"}) setenv(name, "1", 0);
  const char* files = std::getenv("AISP_EXEC_PAIRS");
  if (files == nullptr || *files == '\0') return "AISP_EXEC_PAIRS is not set: run executable pairs with aisp bench run --exec FILE";
  std::stringstream list(files);
  for (std::string file; std::getline(list, file, ':');) {
    if (file.empty()) continue;
    try {
      std::ifstream in(file);
      if (!in) throw std::runtime_error("cannot read it");
      const json declared = json::parse(in, nullptr, false);
      if (declared.is_discarded()) throw std::runtime_error("it is not valid JSON (cut short, or not a pair file)");
      if (!declared.is_object()) throw std::runtime_error("it is not a JSON object (docs/tutorial.md, \"A program in any language\")");
      const int version = declared.value("protocol", 0);
      if (version != protocol_version)
        throw std::runtime_error("it speaks executable protocol " + std::to_string(version) + ", this aisp speaks " +
                                 std::to_string(protocol_version) + " (\"protocol\": 1)");
      if (!declared.contains("pairs") || !declared["pairs"].is_array()) throw std::runtime_error("its \"pairs\" is not a list of pairs");
      const std::string directory = fs::path(file).parent_path().string();
      for (std::size_t i = 0; const auto& p : declared.at("pairs")) {
        // Each error names its pair: "pairs[1] (mine:scale): sizes.benchmark.n must be ...".
        const std::string name = p.is_object() && p.contains("target") && p["target"].is_string() ? " (" + p["target"].get<std::string>() + ")" : "";
        const std::string where = "pairs[" + std::to_string(i++) + "]" + name;
        try {
          auto made = exec_pair(p, directory);
          made.validate();
          registry::instance().add(std::move(made));
        } catch (const json::exception& error) {
          throw std::runtime_error(where + ": " + without_json_prefix(error.what()));
        } catch (const std::exception& error) {
          throw std::runtime_error(where + ": " + error.what());
        }
      }
    } catch (const json::exception& error) {
      return file + ": " + without_json_prefix(error.what());  // a field of the wrong type, or a missing one
    } catch (const std::exception& error) {
      return file + ": " + error.what();
    }
  }
  return "";
}

}  // namespace
}  // namespace aisp::exec

// Called by the plugin loader once the ABI matched (Note [plugins] in src/harness/plugin_loader.cpp).
extern "C" __attribute__((visibility("default"))) const char* aisp_plugin_register() {
  static std::string error;
  error = aisp::exec::register_exec_pairs();
  return error.empty() ? nullptr : error.c_str();
}
