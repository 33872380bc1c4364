// `bench report --run R --format md|csv|json|html`: one run's results for other people. The HTML
// page is self-contained: inline SVG charts (each variant's sample distribution, speedups with
// their CI, SOL %) and the results document embedded as JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace aisp {

[[nodiscard]] std::string report_markdown(const nlohmann::json& results);
[[nodiscard]] std::string report_csv(const nlohmann::json& results);
[[nodiscard]] std::string report_html(const nlohmann::json& results);

}  // namespace aisp
