#include "runner/pair_host_ops.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "aisp/check.hpp"
#include "aisp/registry.hpp"
#include "harness/plugin_loader.hpp"
#include "runner/pair_declaration.hpp"
#include "runner/worker_protocol.hpp"
#include "support/base64_codec.hpp"
#include "verify/reference_runner.hpp"

namespace aisp::pair_host_ops {
namespace {

using nlohmann::json;

const pair& pair_named(const json& request) {
  const auto target = request.at("target").get<std::string>();
  const pair* declared = registry::instance().find(target);
  AISP_EXPECTS(declared != nullptr, "the pair host has no pair " + target);
  return *declared;
}

std::vector<double> doubles_of(const std::string& text) {
  const auto bytes = base64_decode(text);
  AISP_EXPECTS(bytes.size() % sizeof(double) == 0, "the pair host was sent a buffer of partial doubles");
  std::vector<double> values(bytes.size() / sizeof(double));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}


}  // namespace

json load(const json& request) {
  const auto path = request.at("plugin").get<std::string>();
  load_plugins({path});
  const auto canonical = std::filesystem::canonical(path).string();
  const auto& loaded = loaded_plugins();
  const auto found = std::find_if(loaded.begin(), loaded.end(), [&](const loaded_plugin& p) { return p.path == canonical; });
  AISP_EXPECTS(found != loaded.end(), "the pair host did not load " + path);
  const auto& plugin = *found;
  json pairs = json::array();
  // Note [plugin build symmetry]: a library plugin's unit without its own record is held to the
  // switches its binary recorded (the bridges' pairs are the judge's own code).
  const bool bridge = plugin.python_bridge || plugin.exec_bridge;
  for (const auto& target : plugin.targets) {
    auto declaration = declaration_of(*registry::instance().find(target));
    if (!bridge && declaration.at("math_flags").is_null()) declaration["math_flags"] = plugin.math_record;
    pairs.push_back(std::move(declaration));
  }
  return {{"ok", true},
          {"plugin",
           {{"path", plugin.path},
            {"optimized", plugin.optimized ? json(*plugin.optimized) : json(nullptr)},
            {"targets", plugin.targets},
            {"python_bridge", plugin.python_bridge},
            {"exec_bridge", plugin.exec_bridge}}},
          {"pairs", pairs}};
}

json evaluate(const json& request) {
  return {{"ok", true}, {"evaluation", evaluation_of(pair_named(request), protocol::workload_from_json(request.at("workload")))}};
}

json reference(const json& request) {
  const pair& declared = pair_named(request);
  verify::held_reference_io io(protocol::workload_from_json(request.at("workload")), request.at("world").get<int>());
  for (const auto& [name, text] : request.at("inputs").items()) io.inputs[name] = doubles_of(text.get<std::string>());
  for (const auto& [name, count] : request.at("outputs").items()) io.outputs[name].assign(count.get<std::size_t>(), 0.0);
  declared.reference_of()(io);
  json outputs = json::object();
  for (const auto& [name, values] : io.outputs) outputs[name] = base64_encode(values.data(), values.size() * sizeof(double));
  return {{"ok", true}, {"outputs", outputs}};
}

}  // namespace aisp::pair_host_ops
