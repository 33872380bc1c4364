#include "runner/pair_declaration.hpp"

#include "aisp/check.hpp"
#include "runner/worker_protocol.hpp"

namespace aisp {

using nlohmann::json;

namespace {

template <class Enum>
int number(Enum value) {
  return static_cast<int>(value);
}

template <class Enum>
Enum as_enum(const json& value) {
  return static_cast<Enum>(value.get<int>());
}

json tolerance_json(const tolerance& t) { return {{"rtol", t.rtol}, {"atol", t.atol}, {"max_rel_l2", t.max_rel_l2}, {"reason", t.reason}}; }

tolerance tolerance_of(const json& j) {
  return {j.at("rtol").get<double>(), j.at("atol").get<double>(), j.at("max_rel_l2").get<double>(), j.at("reason").get<std::string>()};
}

json buffer_json(const buffer_spec& b) {
  return {{"name", b.name},       {"type", number(b.type)},       {"role", number(b.role)},         {"init", number(b.init)},
          {"dims", b.dims},       {"meaning", number(b.meaning)}, {"derived_from", b.derived_from}, {"derived_scale", b.derived_scale},
          {"same_on_every_rank", b.same_on_every_rank}};
}

json variant_json(const variant& v) {
  return {{"name", v.name},
          {"summary", v.summary},
          {"library", v.library},
          {"precision", v.precision},
          {"precision_tolerance", v.precision_tolerance ? tolerance_json(*v.precision_tolerance) : json(nullptr)},
          {"math", number(v.math)},
          {"collectives", static_cast<bool>(v.collectives)},
          {"host_threads", v.host_threads}};
}

}  // namespace

json declaration_of(const pair& p) {
  json workloads = json::array();
  for (const auto& w : p.workloads()) workloads.push_back(protocol::workload_to_json(w));
  json buffers = json::array();
  for (const auto& b : p.buffers()) buffers.push_back(buffer_json(b));
  json trades = json::array();
  for (const auto& t : p.latency_trades()) trades.push_back({{"metric", t.metric}, {"worst_factor", t.worst_factor}, {"why", t.why}});
  json variants = json::array();
  for (const auto& v : p.variants()) variants.push_back(variant_json(v));
  const auto needs = p.needed_compute_capability();
  return {{"target", p.target()},
          {"summary", p.summary_text()},
          {"backend", number(p.where())},
          {"workloads", workloads},
          {"buffers", buffers},
          {"work", static_cast<bool>(p.work_of())},
          {"reference", static_cast<bool>(p.reference_of())},
          {"tolerance", p.tolerance_of() ? tolerance_json(*p.tolerance_of()) : json(nullptr)},
          {"goal", number(p.goal_of())},
          {"item", p.item_name()},
          {"passes_reason", p.passes_reason()},
          {"judged", {{"metric", p.judged_metric()}, {"quantile", p.judged_quantile()}, {"reason", p.judged_reason()}}},
          {"latency_trades", trades},
          {"exact_math", p.is_exact_math()},
          {"access_policy_window", p.allows_access_policy_window()},
          {"managed_memory", p.allows_managed_memory()},
          {"needs", {{"major", needs.major}, {"minor", needs.minor}, {"why", needs.why}}},
          {"fixed_inputs", p.fixed_inputs_reason()},
          {"short_calls", p.short_calls_reason()},
          {"data_dependent_launches", p.data_dependent_launches_reason()},
          {"host_launches", p.host_launches_reason()},
          {"host_threads", {{"count", p.host_threads()}, {"reason", p.host_threads_reason()}}},
          {"data_path", number(p.path_of())},
          {"world_size", p.gpus()},
          {"tags", p.tags()},
          {"variants", variants},
          {"math_flags", p.build_math_flags() ? json(*p.build_math_flags()) : json(nullptr)}};
}

json evaluation_of(const pair& p, const workload& work) {
  json counts = json::object();
  for (const auto& b : p.buffers()) counts[b.name] = b.num_elements(work);
  json collectives = json::object();
  for (const auto& v : p.variants())
    if (v.collectives) collectives[v.name] = v.collectives(work);
  const work_amount amount = p.work_of() ? p.work_of()(work) : work_amount{};
  return {{"counts", counts},
          {"work", {amount.bytes, amount.flops, amount.special_function_ops}},
          {"items", p.items_at(work)},
          {"passes", p.passes_at(work)},
          {"collectives", collectives}};
}

pair pair_from_declaration(const json& d, pair_functions functions) {
  // Every function reads the same evaluation (its caller caches one a workload).
  const auto& evaluate = functions.evaluate;
  pair p(d.at("target").get<std::string>());
  p.summary(d.at("summary").get<std::string>()).on(as_enum<backend>(d.at("backend")));
  for (const auto& w : d.at("workloads")) {
    const workload work = protocol::workload_from_json(w);
    if (work.kind == workload_kind::benchmark) p.benchmark_size(work.params);
    if (work.kind == workload_kind::validation) p.validation_size(work.params);
    if (work.kind == workload_kind::held_out) p.held_out_size(work.params);
  }
  for (const auto& b : d.at("buffers")) {
    buffer_spec spec;
    spec.name = b.at("name").get<std::string>();
    spec.type = as_enum<dtype>(b.at("type"));
    spec.role = as_enum<buffer_role>(b.at("role"));
    spec.init = as_enum<init_distribution>(b.at("init"));
    spec.dims = b.at("dims").get<std::vector<std::string>>();
    spec.meaning = as_enum<buffer_meaning>(b.at("meaning"));
    spec.derived_from = b.at("derived_from").get<std::string>();
    spec.derived_scale = b.at("derived_scale").get<double>();
    spec.same_on_every_rank = b.at("same_on_every_rank").get<bool>();
    spec.num_elements = [evaluate, name = spec.name](const workload& w) { return evaluate(w).at("counts").at(name).get<std::int64_t>(); };
    p.buffer(std::move(spec));
  }
  if (d.at("work").get<bool>()) {
    p.work([evaluate](const workload& w) {
      const auto amount = evaluate(w).at("work");
      return work_amount{amount.at(0).get<double>(), amount.at(1).get<double>(), amount.at(2).get<double>()};
    });
  }
  if (d.at("reference").get<bool>()) p.reference(std::move(functions.reference));
  if (!d.at("tolerance").is_null()) p.tolerance_override(tolerance_of(d.at("tolerance")));
  p.pursue(as_enum<goal>(d.at("goal")));
  if (const auto item = d.at("item").get<std::string>(); !item.empty())
    p.items_per_call(item, [evaluate](const workload& w) { return evaluate(w).at("items").get<double>(); });
  if (const auto why = d.at("passes_reason").get<std::string>(); !why.empty())
    p.sequential_passes([evaluate](const workload& w) { return evaluate(w).at("passes").get<double>(); }, why);
  if (const auto& judged = d.at("judged"); !judged.at("metric").get<std::string>().empty())
    p.judge_by_recorded(judged.at("metric").get<std::string>(), judged.at("quantile").get<double>(), judged.at("reason").get<std::string>());
  for (const auto& t : d.at("latency_trades"))
    p.trades_latency(t.at("metric").get<std::string>(), t.at("worst_factor").get<double>(), t.at("why").get<std::string>());
  if (d.at("exact_math").get<bool>()) p.exact_math();
  if (d.at("access_policy_window").get<bool>()) p.allow_access_policy_window();
  if (d.at("managed_memory").get<bool>()) p.allow_managed_memory();
  if (const auto& needs = d.at("needs"); needs.at("major").get<int>() != 0)
    p.needs_compute_capability(needs.at("major").get<int>(), needs.at("minor").get<int>(), needs.at("why").get<std::string>());
  const auto reason = [&d](const char* field) { return d.at(field).get<std::string>(); };
  if (!reason("fixed_inputs").empty()) p.fixed_inputs(reason("fixed_inputs"));
  if (!reason("short_calls").empty()) p.short_calls(reason("short_calls"));
  if (!reason("data_dependent_launches").empty()) p.data_dependent_launches(reason("data_dependent_launches"));
  if (!reason("host_launches").empty()) p.times_host_launches(reason("host_launches"));
  if (const auto& threads = d.at("host_threads"); threads.at("count").get<int>() != 1)
    p.host_threads(threads.at("count").get<int>(), threads.at("reason").get<std::string>());
  p.moves_data_over(as_enum<data_path>(d.at("data_path")));
  if (const int world = d.at("world_size").get<int>(); world != 1) p.world_size(world);
  for (const auto& tag : d.at("tags")) p.tag(tag.get<std::string>());
  for (const auto& v : d.at("variants")) {
    variant made;
    made.name = v.at("name").get<std::string>();
    made.summary = v.at("summary").get<std::string>();
    made.library = v.at("library").get<std::string>();
    made.precision = v.at("precision").get<std::string>();
    if (!v.at("precision_tolerance").is_null()) made.precision_tolerance = tolerance_of(v.at("precision_tolerance"));
    made.math = as_enum<math_unit>(v.at("math"));
    made.host_threads = v.at("host_threads").get<int>();
    made.run = [](run_context&) { AISP_EXPECTS(false, "a variant runs in its worker, never in the judge"); };
    if (v.at("collectives").get<bool>())
      made.collectives = [evaluate, name = made.name](const workload& w) {
        return evaluate(w).at("collectives").at(name).get<std::int64_t>();
      };
    p.add_variant(std::move(made));
  }
  if (!d.at("math_flags").is_null()) p.built_with_math(d.at("math_flags").get<std::string>());
  return p;
}

}  // namespace aisp
