// `aisp bench roofline`: one run's results drawn as a roofline (SVG). The measured (else
// datasheet) ceilings are lines, each variant with FLOPs is a labelled point at its arithmetic
// intensity and achieved FLOP/s; variants that do no FLOPs (copies) get a bar of their memory SOL %.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace aisp {

// `results`: a results.json document. Throws contract_error when it holds no pairs.
[[nodiscard]] std::string roofline_svg(const nlohmann::json& results);

}  // namespace aisp
