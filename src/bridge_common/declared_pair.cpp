#include "bridge_common/declared_pair.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

#include "support/edit_distance.hpp"

namespace aisp::bridge {

using nlohmann::json;

// Note [declared fields]: a pair declared in JSON is user input. Each field is read through these,
// so a wrong one is one line naming where it is and what it should be ("sizes.benchmark.n must be a
// whole number from 0 to 2^62, not 1e+30"), never nlohmann's bare "type must be number, but is
// string", std::map::at's "map::at", or a float cast to int64 (1e30 wrapped to a negative size).
[[noreturn]] void wrong_field(const std::string& where, const std::string& wanted, const json& got) {
  throw std::runtime_error(where + " must be " + wanted + ", not " + got.dump());
}

const json& field_of(const json& object, const std::string& where, const std::string& name) {
  if (!object.is_object()) wrong_field(where, "an object", object);
  const auto found = object.find(name);
  if (found == object.end()) throw std::runtime_error((where.empty() ? "the pair" : where) + " has no \"" + name + "\"");
  return *found;
}

std::string path_of(const std::string& where, const std::string& name) { return where.empty() ? name : where + "." + name; }

std::string text_of(const json& value, const std::string& where) {
  if (!value.is_string()) wrong_field(where, "a string", value);
  return value.get<std::string>();
}

double number_of(const json& value, const std::string& where) {
  if (!value.is_number()) wrong_field(where, "a number", value);
  return value.get<double>();
}

const json& list_of(const json& value, const std::string& where) {
  if (!value.is_array()) wrong_field(where, "a list", value);
  return value;
}

std::vector<std::string> texts_of(const json& value, const std::string& where) {
  std::vector<std::string> texts;
  for (std::size_t i = 0; const auto& item : list_of(value, where)) texts.push_back(text_of(item, where + "[" + std::to_string(i++) + "]"));
  return texts;
}

// A name among `known`'s keys.
template <class Value>
Value one_of(const std::map<std::string, Value>& known, const json& value, const std::string& where) {
  std::string names;
  for (const auto& [name, _] : known) names += (names.empty() ? "" : ", ") + name;
  if (!value.is_string() || !known.contains(value.get<std::string>())) wrong_field(where, "one of " + names, value);
  return known.at(value.get<std::string>());
}

// A size: a whole number from 0 to 2^62 (a buffer's elements are products of them).
std::int64_t size_value(const json& value, const std::string& where) {
  constexpr std::int64_t largest = std::int64_t{1} << 62;
  if (!value.is_number_integer() || (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(largest)) ||
      value.get<std::int64_t>() < 0 || value.get<std::int64_t>() > largest)
    wrong_field(where, "a whole number from 0 to 2^62", value);
  return value.get<std::int64_t>();
}

param_map params_of(const json& sizes, const std::string& where) {
  if (!sizes.is_object()) wrong_field(where, "an object of name: size", sizes);
  param_map params;
  for (const auto& [name, value] : sizes.items()) params[name] = size_value(value, path_of(where, name));
  return params;
}

param_map params_of(const json& sizes) { return params_of(sizes, "sizes"); }

// {rtol, atol, max_rel_l2 (optional), reason}
tolerance tolerance_of(const json& declared, const std::string& where) {
  return {.rtol = number_of(field_of(declared, where, "rtol"), where + ".rtol"),
          .atol = number_of(field_of(declared, where, "atol"), where + ".atol"),
          .max_rel_l2 = declared.contains("max_rel_l2") ? number_of(declared["max_rel_l2"], where + ".max_rel_l2") : 0.0,
          .reason = text_of(field_of(declared, where, "reason"), where + ".reason")};
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
  if (!declared.is_object()) wrong_field("a pair", "a JSON object", declared);
  static const std::map<std::string, backend> backends = {{"host", backend::host}, {"cuda", backend::cuda}};
  p.summary(declared.contains("summary") ? text_of(declared["summary"], "summary") : "")
      .on(declared.contains("backend") ? one_of(backends, declared["backend"], "backend") : backend::host);
  const auto& sizes = field_of(declared, "", "sizes");
  p.benchmark_size(params_of(field_of(sizes, "sizes", "benchmark"), "sizes.benchmark"));
  for (std::size_t i = 0; const auto& size : list_of(field_of(sizes, "sizes", "validation"), "sizes.validation"))
    p.validation_size(params_of(size, "sizes.validation[" + std::to_string(i++) + "]"));
  if (sizes.contains("held_out")) {
    for (std::size_t i = 0; const auto& size : list_of(sizes["held_out"], "sizes.held_out"))
      p.held_out_size(params_of(size, "sizes.held_out[" + std::to_string(i++) + "]"));
  }
  static const std::map<std::string, bool> roles = {{"input", false}, {"output", true}};
  static const std::map<std::string, init_distribution> inits = {
      {"uniform_signed", init_distribution::uniform_signed}, {"uniform_unit", init_distribution::uniform_unit},
      {"small_integers", init_distribution::small_integers}, {"index_permutation", init_distribution::index_permutation}};
  std::vector<declared_buffer> buffers;
  for (std::size_t i = 0; const auto& buffer : list_of(field_of(declared, "", "buffers"), "buffers")) {
    const auto where = "buffers[" + std::to_string(i++) + "]";
    declared_buffer b{text_of(field_of(buffer, where, "name"), where + ".name"), texts_of(field_of(buffer, where, "dims"), where + ".dims"),
                      one_of(roles, field_of(buffer, where, "role"), where + ".role")};
    const dtype type = dtype_from_name(text_of(field_of(buffer, where, "dtype"), where + ".dtype"));
    if (!b.is_output) {
      p.input(b.name, type, b.dims, buffer.contains("init") ? one_of(inits, buffer["init"], where + ".init") : init_distribution::uniform_signed);
    } else {
      p.output(b.name, type, b.dims);
    }
    buffers.push_back(std::move(b));
  }
  if (declared.contains("tolerance") && !declared["tolerance"].is_null()) p.tolerance_override(tolerance_of(declared["tolerance"], "tolerance"));
  static const std::map<std::string, goal> goals = {
      {"speed", goal::speed}, {"memory", goal::memory}, {"latency", goal::latency}, {"throughput", goal::throughput}};
  p.pursue(declared.contains("goal") ? one_of(goals, declared["goal"], "goal") : goal::speed);
  if (declared.contains("exact_math")) {
    if (!declared["exact_math"].is_boolean()) wrong_field("exact_math", "true or false", declared["exact_math"]);
    if (declared["exact_math"].get<bool>()) p.exact_math();
  }
  if (declared.contains("fixed_inputs")) {
    if (const auto reason = text_of(declared["fixed_inputs"], "fixed_inputs"); !reason.empty()) p.fixed_inputs(reason);
  }
  if (const int threads = threads_field(declared, ""); threads > 1)
    p.host_threads(threads, declared.contains("threads_reason") ? text_of(declared["threads_reason"], "threads_reason") : "");
  return buffers;
}

void refuse_unknown_fields(const json& object, const std::vector<std::string>& known, const std::string& where) {
  if (!object.is_object()) return;
  for (const auto& [field, _] : object.items()) {
    if (std::find(known.begin(), known.end(), field) != known.end()) continue;
    std::string nearest;
    std::size_t best = 3;  // at most two edits away
    for (const auto& name : known) {
      if (const auto d = edit_distance(field, name); d < best) best = d, nearest = name;
    }
    std::string names;
    for (const auto& name : known) names += (names.empty() ? "" : ", ") + name;
    throw std::runtime_error((where.empty() ? "the pair" : where) + " has an unknown field \"" + field + "\"" +
                             (nearest.empty() ? " (known: " + names + ")" : "; did you mean \"" + nearest + "\"?"));
  }
}

void declare_precision(variant& v, const json& declared, const std::string& where) {
  if (!declared.is_object()) return;
  const auto name = [&](const char* field) { return where.empty() ? std::string(field) : where + "." + field; };
  if (declared.contains("precision") && !declared["precision"].is_null()) v.precision = text_of(declared["precision"], name("precision"));
  if (!declared.contains("tolerance") || declared["tolerance"].is_null()) return;
  if (v.precision.empty())
    throw std::runtime_error(name("tolerance") + ": a variant's own tolerance comes with the precision it computes in (\"precision\")");
  v.precision_tolerance = tolerance_of(declared["tolerance"], name("tolerance"));
}

int threads_field(const json& declared, const std::string& where) {
  if (!declared.is_object() || !declared.contains("threads") || declared["threads"].is_null()) return 0;
  const json& threads = declared["threads"];
  const auto name = where.empty() ? std::string("threads") : where + ".threads";
  if (!threads.is_number_integer() || threads.get<std::int64_t>() < 1 || threads.get<std::int64_t>() > 4096)
    wrong_field(name, "a whole number from 1 to 4096", threads);
  return threads.get<int>();
}

}  // namespace aisp::bridge
