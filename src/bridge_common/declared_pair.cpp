#include "bridge_common/declared_pair.hpp"

#include <map>

namespace aisp::bridge {

using nlohmann::json;

param_map params_of(const json& sizes) {
  param_map params;
  for (const auto& [name, value] : sizes.items()) params[name] = value.get<std::int64_t>();
  return params;
}

json sizes_of(const workload& work) {
  json sizes = json::object();
  for (const auto& [name, value] : work.params) sizes[name] = value;
  return sizes;
}

json shape_of(const declared_buffer& buffer, const workload& work, std::int64_t world) {
  json shape = json::array();
  if (world > 1) shape.push_back(world);
  for (const auto& dim : buffer.dims) shape.push_back(work.get(dim));
  return shape;
}

std::vector<declared_buffer> declare_common(pair& p, const json& declared) {
  p.summary(declared.value("summary", "")).on(declared.value("backend", std::string("host")) == "cuda" ? backend::cuda : backend::host);
  const auto& sizes = declared.at("sizes");
  p.benchmark_size(params_of(sizes.at("benchmark")));
  for (const auto& size : sizes.at("validation")) p.validation_size(params_of(size));
  for (const auto& size : sizes.value("held_out", json::array())) p.held_out_size(params_of(size));
  std::vector<declared_buffer> buffers;
  for (const auto& buffer : declared.at("buffers")) {
    declared_buffer b{buffer.at("name").get<std::string>(), buffer.at("dims").get<std::vector<std::string>>(),
                      buffer.at("role") == "output"};
    const dtype type = dtype_from_name(buffer.at("dtype").get<std::string>());
    if (!b.is_output) {
      static const std::map<std::string, init_distribution> inits = {
          {"uniform_signed", init_distribution::uniform_signed}, {"uniform_unit", init_distribution::uniform_unit},
          {"small_integers", init_distribution::small_integers}, {"index_permutation", init_distribution::index_permutation}};
      p.input(b.name, type, b.dims, inits.at(buffer.value("init", "uniform_signed")));
    } else {
      p.output(b.name, type, b.dims);
    }
    buffers.push_back(std::move(b));
  }
  if (const auto& tol = declared.value("tolerance", json()); tol.is_object())
    p.tolerance_override({.rtol = tol.at("rtol").get<double>(), .atol = tol.at("atol").get<double>(),
                          .max_rel_l2 = tol.value("max_rel_l2", 0.0), .reason = tol.at("reason").get<std::string>()});
  static const std::map<std::string, goal> goals = {
      {"speed", goal::speed}, {"memory", goal::memory}, {"latency", goal::latency}, {"throughput", goal::throughput}};
  p.pursue(goals.at(declared.value("goal", std::string("speed"))));
  if (declared.value("exact_math", false)) p.exact_math();
  if (const auto reason = declared.value("fixed_inputs", std::string()); !reason.empty()) p.fixed_inputs(reason);
  if (const int threads = declared.value("threads", 1); threads != 1) p.host_threads(threads, declared.value("threads_reason", std::string()));
  return buffers;
}

}  // namespace aisp::bridge
