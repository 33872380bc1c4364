#include "aisp/pair.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "aisp/registry.hpp"

namespace aisp {

pair::pair(std::string target) : target_(std::move(target)) {}

pair& pair::summary(std::string text) {
  summary_ = std::move(text);
  return *this;
}
pair& pair::on(backend where) {
  backend_ = where;
  return *this;
}
pair& pair::benchmark_size(param_map params) {
  workloads_.push_back(workload{workload_kind::benchmark, std::move(params)});
  return *this;
}
pair& pair::validation_size(param_map params) {
  workloads_.push_back(workload{workload_kind::validation, std::move(params)});
  return *this;
}
pair& pair::held_out_size(param_map params) {
  workloads_.push_back(workload{workload_kind::held_out, std::move(params)});
  return *this;
}
pair& pair::add_buffer(std::string name, dtype type, buffer_role role, element_count_fn count,
                       init_distribution init) {
  buffer_spec spec;
  spec.name = std::move(name);
  spec.type = type;
  spec.role = role;
  spec.num_elements = std::move(count);
  spec.init = init;
  buffers_.push_back(std::move(spec));
  return *this;
}
pair& pair::input(std::string name, dtype type, element_count_fn count, init_distribution init) {
  return add_buffer(std::move(name), type, buffer_role::input, std::move(count), init);
}
pair& pair::output(std::string name, dtype type, element_count_fn count) {
  return add_buffer(std::move(name), type, buffer_role::output, std::move(count),
                    init_distribution::uniform_signed);
}
pair& pair::scratch(std::string name, dtype type, element_count_fn count) {
  return add_buffer(std::move(name), type, buffer_role::scratch, std::move(count),
                    init_distribution::uniform_signed);
}
namespace {
element_count_fn product_of(std::vector<std::string> dims) {
  return [dims = std::move(dims)](const workload& w) {
    std::int64_t count = 1;
    for (const auto& d : dims) {
      if (__builtin_mul_overflow(count, w.get(d), &count)) return std::int64_t{-1};  // past int64: refused as non-positive
    }
    return count;
  };
}

// Note [declared tolerance ceiling] (include/aisp/pair.hpp): finite, non-negative bounds, and a
// relative L2 bound no looser than max_declared_rel_l2.
template <typename Gap>
void check_declared_tolerance(const tolerance& t, const std::string& what, const Gap& gap) {
  for (const double bound : {t.rtol, t.atol, t.max_rel_l2}) {
    if (!std::isfinite(bound) || bound < 0) {
      gap(fmt::format("{} has a bound of {} (bounds are finite and non-negative)", what, bound));
      return;
    }
  }
  if (t.max_rel_l2 > max_declared_rel_l2)
    gap(fmt::format("{} allows a relative L2 error of {:g}, over the most any declaration may, {:g} (e5m2's default): a result that "
                    "far from the reference is not the same computation",
                    what, t.max_rel_l2, max_declared_rel_l2));
}
}  // namespace

pair& pair::input(std::string name, dtype type, std::vector<std::string> dims, init_distribution init,
                  buffer_meaning meaning) {
  add_buffer(std::move(name), type, buffer_role::input, product_of(dims), init);
  buffers_.back().dims = std::move(dims);
  buffers_.back().meaning = meaning;
  return *this;
}
pair& pair::derived_input(std::string name, dtype type, std::string source, double scale) {
  const auto from = std::find_if(buffers_.begin(), buffers_.end(), [&](const buffer_spec& b) { return b.name == source; });
  AISP_EXPECTS(from != buffers_.end() && from->role == buffer_role::input,
               target_ + ": derived input " + name + " names '" + source + "', which is not an input declared before it");
  AISP_EXPECTS(from->derived_from.empty(), target_ + ": derived input " + name + " names '" + source +
                                               "', itself derived: derive both from '" + from->derived_from + "'");
  buffer_spec spec = *from;  // the same element count, dims and distribution
  spec.name = std::move(name);
  spec.type = type;
  spec.meaning = buffer_meaning::data;  // the challenges perturb the source; this one follows
  spec.derived_from = std::move(source);
  AISP_EXPECTS(scale > 0 && std::isfinite(scale), target_ + ": derived input " + spec.name + " needs a positive, finite scale");
  spec.derived_scale = scale;
  buffers_.push_back(std::move(spec));
  return *this;
}

pair& pair::buffer(buffer_spec spec) {
  buffers_.push_back(std::move(spec));
  return *this;
}

pair& pair::same_on_every_rank(const std::string& input) {
  bool found = false;
  for (auto& b : buffers_) {
    if (b.role == buffer_role::input && (b.name == input || b.derived_from == input)) {
      b.same_on_every_rank = true;
      found = found || b.name == input;
    }
  }
  AISP_EXPECTS(found, target_ + ": same_on_every_rank names '" + input + "', which is not an input declared before it");
  return *this;
}

pair& pair::output(std::string name, dtype type, std::vector<std::string> dims) {
  add_buffer(std::move(name), type, buffer_role::output, product_of(dims), init_distribution::uniform_signed);
  buffers_.back().dims = std::move(dims);
  return *this;
}
pair& pair::exact_math() {
  exact_math_ = true;
  return *this;
}

pair& pair::fixed_inputs(std::string reason) {
  AISP_EXPECTS(!reason.empty(), target_ + ": fixed_inputs() needs the reason the inputs must stay fixed");
  fixed_inputs_reason_ = std::move(reason);
  return *this;
}

pair& pair::data_dependent_launches(std::string reason) {
  AISP_EXPECTS(!reason.empty(), target_ + ": data_dependent_launches() needs the reason a call's launches depend on its inputs");
  data_dependent_launches_reason_ = std::move(reason);
  return *this;
}
pair& pair::times_host_launches(std::string reason) {
  AISP_EXPECTS(!reason.empty(), target_ + ": times_host_launches() needs the reason the host's launches are what it times");
  host_launches_reason_ = std::move(reason);
  return *this;
}
pair& pair::host_threads(int count, std::string reason) {
  AISP_EXPECTS(count >= 1 && count <= max_host_threads,
               fmt::format("{}: host_threads({}) wants 1 to {} threads", target_, count, max_host_threads));
  AISP_EXPECTS(count == 1 || !reason.empty(), target_ + ": host_threads() needs the reason its calls run on several threads");
  host_threads_ = count;
  host_threads_reason_ = count == 1 ? std::string() : std::move(reason);
  return *this;
}
pair& pair::short_calls(std::string reason) {
  AISP_EXPECTS(!reason.empty(), target_ + ": short_calls() needs the reason its calls are short and a warm L2 is fair");
  short_calls_reason_ = std::move(reason);
  return *this;
}

pair& pair::allow_access_policy_window() {
  access_policy_window_ = true;
  return *this;
}

pair& pair::allow_managed_memory() {
  managed_memory_ = true;
  return *this;
}

pair& pair::needs_compute_capability(int major, int minor, std::string why) {
  needed_major_ = major;
  needed_minor_ = minor;
  needed_why_ = std::move(why);
  return *this;
}

std::string pair::unsupported_on(int major, int minor) const {
  if (needed_major_ == 0 || (major == needed_major_ && minor == needed_minor_)) return "";
  return "needs a GPU of compute capability " + std::to_string(needed_major_) + "." + std::to_string(needed_minor_) + " (" +
         needed_why_ + "); this one is " + std::to_string(major) + "." + std::to_string(minor);
}

pair& pair::moves_data_over(data_path path) {
  data_path_ = path;
  return *this;
}

pair& pair::work(work_fn fn) {
  work_ = std::move(fn);
  return *this;
}
pair& pair::reference(reference_fn fn) {
  reference_ = std::move(fn);
  return *this;
}
pair& pair::tolerance_override(tolerance tol) {
  tolerance_ = std::move(tol);
  return *this;
}
pair& pair::pursue(goal what) {
  goal_ = what;
  return *this;
}
pair& pair::items_per_call(std::string item, std::function<double(const workload&)> count) {
  AISP_EXPECTS(!item.empty() && count, target_ + ": items_per_call() needs the item's name and its count per call");
  item_name_ = std::move(item);
  items_ = std::move(count);
  return *this;
}
pair& pair::sequential_passes(std::function<double(const workload&)> passes, std::string reason) {
  AISP_EXPECTS(passes && !reason.empty(), target_ + ": sequential_passes() needs the passes and the reason each step must move the buffers again");
  passes_ = std::move(passes);
  passes_reason_ = std::move(reason);
  return *this;
}
pair& pair::judge_by_recorded(std::string metric, double quantile, std::string why) {
  AISP_EXPECTS(!metric.empty() && !why.empty(), target_ + ": judge_by_recorded() needs the metric and why the pair is judged by it");
  AISP_EXPECTS(quantile > 0 && quantile < 1, target_ + ": judge_by_recorded() needs a quantile inside (0, 1), e.g. 0.99");
  AISP_EXPECTS(traded_latency(metric) == nullptr, target_ + ": the metric a pair is judged by cannot be traded (trades_latency)");
  judged_metric_ = std::move(metric);
  judged_quantile_ = quantile;
  judged_reason_ = std::move(why);
  return *this;
}
pair& pair::trades_latency(std::string metric, double worst_factor, std::string why) {
  AISP_EXPECTS(!metric.empty() && !why.empty(), target_ + ": trades_latency() needs the recorded metric and why the pair trades it");
  AISP_EXPECTS(worst_factor > 1.5 && worst_factor <= max_traded_latency_factor,
               target_ + ": trades_latency() allows a worst over 1.5x the baseline's (W12's own bound) and at most 4x: past that no trade is told from a starved item");
  AISP_EXPECTS(metric != judged_metric_, target_ + ": the metric a pair is judged by cannot be traded (trades_latency)");
  AISP_EXPECTS(traded_latency(metric) == nullptr, target_ + ": trades_latency() once a metric");
  latency_trades_.push_back({std::move(metric), worst_factor, std::move(why)});
  return *this;
}
pair& pair::delivers(delivery_spec spec) {
  AISP_EXPECTS(!spec.output.empty() && spec.items && spec.outputs && spec.element,
               target_ + ": delivers() needs the output buffer, and the items, their outputs and where each output is");
  deliveries_ = std::move(spec);
  return *this;
}
const latency_trade* pair::traded_latency(std::string_view metric) const {
  for (const auto& trade : latency_trades_) {
    if (trade.metric == metric) return &trade;
  }
  return nullptr;
}
pair& pair::world_size(int gpus) {
  world_size_ = gpus;
  return *this;
}
pair& pair::built_with_math(std::string flags) {
  build_math_flags_ = std::move(flags);
  return *this;
}

pair& pair::tag(std::string name) {
  tags_.push_back(std::move(name));
  return *this;
}
pair& pair::add_variant(variant v) {
  variants_.push_back(std::move(v));
  return *this;
}
pair& pair::add_variant(std::string name, std::string what_changed, stage_fn run) {
  return add_variant(variant{std::move(name), std::move(what_changed), std::move(run), {}, {}, {}, {}, {}, {}, {}});
}

const workload& pair::benchmark_workload() const {
  for (const auto& w : workloads_) {
    if (w.kind == workload_kind::benchmark) return w;
  }
  AISP_EXPECTS(false, target_ + " declares no benchmark size");
  return workloads_.front();
}

const variant& pair::find_variant(std::string_view name) const {
  for (const auto& v : variants_) {
    if (v.name == name) return v;
  }
  AISP_EXPECTS(false, target_ + " has no variant '" + std::string(name) + "'");
  return variants_.front();
}

const buffer_spec& pair::find_buffer(std::string_view name) const {
  for (const auto& b : buffers_) {
    if (b.name == name) return b;
  }
  AISP_EXPECTS(false, target_ + " declares no buffer '" + std::string(name) + "'");
  return buffers_.front();
}

double pair::buffer_bytes(const workload& work) const {
  double bytes = 0;
  for (const auto& b : buffers_) bytes += static_cast<double>(b.num_elements(work)) * static_cast<double>(dtype_size(b.type));
  return bytes;
}

std::string pair::group() const { return target_.substr(0, target_.find(':')); }

std::string pair::short_name() const {
  const auto colon = target_.find(':');
  return colon == std::string::npos ? target_ : target_.substr(colon + 1);
}

namespace {

// Note [printable names]: a target named "\r\x1b[2K<a forged verdict line>\x1b[8m" drew a
// "faster" line over its real "slower" on the terminal (red team, round five, 2026-12-04). Names
// and texts a pair declares reach the terminal, Markdown, CSV and HTML: no control characters
// (UTF-8 such as "µs" stays). The first one, escaped, for the message.
bool is_control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

std::string escaped_byte(char c) { return fmt::format("\\x{:02x}", static_cast<unsigned char>(c)); }

std::optional<std::string> control_character_in(const std::string& text) {
  const auto found = std::find_if(text.begin(), text.end(), is_control);
  return found == text.end() ? std::nullopt : std::optional<std::string>(escaped_byte(*found));
}

// The text with its control characters escaped (\x1b), for an error message about it.
std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) out += is_control(c) ? escaped_byte(c) : std::string(1, c);
  return out;
}

}  // namespace

// Every buffer at every declared size: its dims name sizes the workload has, and it holds at
// least one element. Found at load, a dim naming no size ended the whole run at the pair's turn,
// the pairs after it never run, and a zero-sized buffer reached the variants' code (a user's
// walkthrough, 2026-12-04).
void pair::check_buffer_sizes(const std::function<void(const std::string&)>& gap) const {
  for (const auto& b : buffers_) {
    for (const auto& w : workloads_) {
      const auto at = fmt::format("the {} size ({})", workload_kind_name(w.kind), w.describe());
      std::string missing;
      for (const auto& dim : b.dims) {
        if (!w.params.contains(dim)) missing += (missing.empty() ? "'" : ", '") + dim + "'";
      }
      if (!missing.empty()) {
        gap(fmt::format("buffer {} names dim {} that {} does not give", escaped(b.name), missing, at));
        break;
      }
      try {
        // A scratch buffer may be empty at a small size (a workspace quadratic in n); data may not.
        const auto elements = b.num_elements ? b.num_elements(w) : 0;
        if (elements < 0 || (elements == 0 && b.role != buffer_role::scratch))
          gap(fmt::format("buffer {} has {} elements at {}: every input and output needs at least one", escaped(b.name), elements, at));
      } catch (const std::exception& error) {
        gap(fmt::format("buffer {}'s size cannot be computed at {}: {}", escaped(b.name), at, error.what()));
      }
    }
  }
}

void pair::validate() const {
  std::string gaps;
  const auto gap = [&gaps](const std::string& what) { gaps += (gaps.empty() ? "" : "; ") + what; };
  const auto printable = [&gap](const std::string& what, const std::string& text) {
    if (const auto found = control_character_in(text)) gap(what + " holds the control character " + *found + " (Note [printable names])");
  };
  printable("the target", target_);
  printable("the summary", summary_);
  for (const auto& tag : tags_) printable("a tag", tag);
  for (const auto& v : variants_) {
    for (const auto* text : {&v.name, &v.summary, &v.library, &v.precision}) printable("variant " + escaped(v.name), *text);
  }
  if (target_.find(':') == std::string::npos) gap("target must be group:name");
  const auto count_kind = [this](workload_kind kind) {
    return std::count_if(workloads_.begin(), workloads_.end(),
                         [kind](const workload& w) { return w.kind == kind; });
  };
  if (count_kind(workload_kind::benchmark) != 1) gap("exactly one benchmark size is required");
  if (count_kind(workload_kind::validation) < 1) gap("at least one validation size is required");
  if (count_kind(workload_kind::held_out) < 1) gap("at least one held-out size is required (V8)");
  if (!reference_) gap("no reference");
  if (!work_) gap("no declared work (bytes, FLOPs)");
  if (std::none_of(buffers_.begin(), buffers_.end(),
                   [](const buffer_spec& b) { return b.role == buffer_role::output; }))
    gap("no output buffer");
  bool has_baseline = false;
  bool has_optimized = false;
  int peers = 0;
  for (const auto& v : variants_) {
    if (!v.run) gap("variant " + v.name + " has no run()");
    if (v.name == "baseline") has_baseline = true;
    else if (v.name == "optimized" || v.name.starts_with("optimized_")) has_optimized = true;
    else if (v.name.starts_with("peer_")) {
      if (v.library.empty()) gap("peer variant " + v.name + " must declare the library it runs");
      if (++peers > 1) gap("at most one peer variant");
    } else gap("variant name '" + v.name + "' is not baseline, optimized, optimized_<step> or peer_<library>");
    if (!v.precision.empty() && (!v.precision_tolerance || v.precision_tolerance->reason.empty()))
      gap("variant " + v.name + " declares precision '" + v.precision + "' but no precision_tolerance with a reason");
    if (v.precision_tolerance && v.precision.empty())
      gap("variant " + v.name + " has a precision_tolerance but declares no precision change");
    if (v.host_threads < 0 || v.host_threads > host_threads_)
      gap(fmt::format("variant {} declares {} threads; the pair's host_threads ({}) is the most a variant may run on", v.name,
                      v.host_threads, host_threads_));
  }
  if (!has_baseline) gap("no baseline variant");
  if (!has_optimized) gap("no optimized variant");
  if (tolerance_ && tolerance_->reason.empty()) gap("a tolerance override needs a reason");
  if (tolerance_) check_declared_tolerance(*tolerance_, "the tolerance override", gap);
  for (const auto& v : variants_) {
    if (v.precision_tolerance) check_declared_tolerance(*v.precision_tolerance, "variant " + v.name + "'s precision_tolerance", gap);
  }
  if (world_size_ < 1 || world_size_ > max_world_size) gap(fmt::format("world size {} is not in 1..{}", world_size_, max_world_size));
  for (std::size_t i = 0; i < variants_.size(); ++i) {
    if (std::any_of(variants_.begin(), variants_.begin() + static_cast<std::ptrdiff_t>(i),
                    [&](const variant& earlier) { return earlier.name == variants_[i].name; }))
      gap("variant " + escaped(variants_[i].name) + " is declared twice");
  }
  if (deliveries_) {  // Note [witnessed deliveries]
    const auto out = std::find_if(buffers_.begin(), buffers_.end(), [this](const buffer_spec& b) { return b.name == deliveries_->output; });
    if (out == buffers_.end() || out->role != buffer_role::output)
      gap("delivers() names " + escaped(deliveries_->output) + ", which is not an output buffer");
    if (world_size_ > 1) gap("delivers() is for a pair of one rank");
    if (judged_metric_ == witnessed_first_output && !deliveries_->arrival_s)
      gap("judged by ttft_s, which delivers() witnesses only with the items' arrivals");
  }
  check_buffer_sizes(gap);
  AISP_EXPECTS(gaps.empty(), escaped(target_) + ": " + gaps);
}

std::string_view data_path_name(data_path path) {
  switch (path) {
    case data_path::device_memory: return "device_memory";
    case data_path::pcie_both_directions: return "pcie_both_directions";
    case data_path::pcie_one_direction: return "pcie_one_direction";
    case data_path::gpu_interconnect: return "gpu_interconnect";
  }
  return "unknown";
}

std::string_view math_unit_name(math_unit unit) {
  switch (unit) {
    case math_unit::fp32_simt: return "fp32";
    case math_unit::tf32_tensor: return "tf32_tensor";
    case math_unit::fp16_tensor: return "fp16_tensor";
    case math_unit::bf16_tensor: return "bf16_tensor";
    case math_unit::fp8_tensor: return "fp8_tensor";
  }
  return "fp32";
}

registrar::registrar(pair declared, const char* math_flags) {
  if (math_flags != nullptr) declared.built_with_math(math_flags);
  registry::instance().add(std::move(declared));
}

}  // namespace aisp
