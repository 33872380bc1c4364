#include "runner/size_overrides.hpp"

#include <limits>
#include <string>

#include "aisp/check.hpp"
#include "runner/memory_fit.hpp"

namespace aisp {

std::map<std::string, std::int64_t> parse_size_overrides(const std::vector<std::string>& texts) {
  std::map<std::string, std::int64_t> overrides;
  for (const auto& text : texts) {
    std::size_t begin = 0;
    while (begin <= text.size()) {
      const auto end = std::min(text.find(',', begin), text.size());
      const auto size = text.substr(begin, end - begin);
      const auto equals = size.find('=');
      AISP_EXPECTS(equals != std::string::npos && equals > 0, "--size wants name=value, not '" + size + "'");
      std::size_t used = 0;
      std::int64_t value = 0;
      try {
        value = std::stoll(size.substr(equals + 1), &used);
      } catch (const std::exception&) {
        used = 0;
      }
      AISP_EXPECTS(used > 0 && used == size.size() - equals - 1, "--size " + size + ": the value is not an integer");
      AISP_EXPECTS(value > 0, "--size " + size + ": the value must be positive");
      overrides[size.substr(0, equals)] = value;
      begin = end + 1;
    }
  }
  return overrides;
}

void check_size_overrides(const std::vector<pair_request>& requests, const run_config& config,
                          std::optional<std::uint64_t> device_bytes) {
  if (config.benchmark_override.empty()) return;
  const auto host_bytes = host_available_memory();
  for (const auto& request : requests) {
    const pair& declared = *request.declared;
    const workload work = benchmark_of(declared, config);  // an unknown parameter is a contract_error
    for (const auto& b : declared.buffers()) {  // a product past int64 counts as -1 (product_of)
      const std::int64_t count = b.num_elements(work);
      AISP_EXPECTS(count > 0 && count <= std::numeric_limits<std::int64_t>::max() / 16,
                   declared.target() + " at " + work.describe() + ": buffer " + b.name + " would hold " +
                       (count > 0 ? std::to_string(count) + " elements" : std::string("no elements, or more than 2^63")) +
                       "; choose a smaller --size");
    }
    std::string problem = memory_fit_problem(host_memory_need(declared, work, 3, host_bytes));
    if (problem.empty() && declared.where() == backend::cuda) problem = memory_fit_problem(device_memory_need(declared, work, 3, device_bytes));
    AISP_EXPECTS(problem.empty(), declared.target() + " at " + work.describe() + ": " + problem);
  }
}

}  // namespace aisp
