#include "results/roofline_svg.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "support/markup.hpp"

namespace aisp {
namespace {

constexpr double width = 960;
constexpr double plot_left = 90, plot_right = 700, plot_top = 40, plot_bottom = 440;
constexpr double x_min = 1e-2, x_max = 1e3;    // FLOP per byte
constexpr double y_min = 1e9, y_max = 2e15;    // FLOP/s

double px(double intensity) {
  return plot_left + (std::log10(intensity) - std::log10(x_min)) / (std::log10(x_max) - std::log10(x_min)) * (plot_right - plot_left);
}
double py(double flops) {
  const double clamped = std::clamp(flops, y_min, y_max);
  return plot_bottom - (std::log10(clamped) - std::log10(y_min)) / (std::log10(y_max) - std::log10(y_min)) * (plot_bottom - plot_top);
}

struct bar {
  std::string label;
  double sol = 0;
};

// A pair's roofline block; empty where the run measured no speed (`bench verify` writes null).
nlohmann::json roofline_of(const nlohmann::json& pair) {
  const auto found = pair.find("roofline");
  return found != pair.end() && found->is_object() ? *found : nlohmann::json::object();
}

}  // namespace

std::string roofline_svg(const nlohmann::json& results) {
  const auto pairs = results.value("pairs", nlohmann::json::array());
  AISP_EXPECTS(!pairs.empty(), "the run holds no pairs to plot");
  const bool measured = std::ranges::any_of(pairs, [](const nlohmann::json& p) { return !roofline_of(p).empty(); });
  AISP_EXPECTS(measured, "the run measured no speeds (a `bench verify` run, or every pair failed): draw the roofline of a `bench run`");
  nlohmann::json ceilings;
  for (const auto& p : pairs) {
    const auto c = roofline_of(p).value("ceilings", nlohmann::json::object());
    if (c.value("memory_bytes_per_s", 0.0) > 0 || c.value("fp32_flops_per_s", 0.0) > 0) {
      ceilings = c;
      break;
    }
  }
  std::vector<bar> bars;
  std::string points;
  for (const auto& p : pairs) {
    const double intensity = roofline_of(p).value("arithmetic_intensity_flop_per_byte", 0.0);
    for (const auto& v : p.value("variants", nlohmann::json::array())) {
      if (v.value("name", "") == "baseline_twin") continue;
      const std::string label = p.value("target", "?") + ":" + v.value("name", "?");
      const double flops = v.value("achieved_flops_per_s", 0.0);
      if (intensity > 0 && flops > 0) {
        points += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="5" class="point"/><text x="{:.1f}" y="{:.1f}" class="label">{}</text>)"
                              "\n",
                              px(intensity), py(flops), px(intensity) + 8, py(flops) - 6, xml_escaped(label));
      } else {
        bars.push_back({label, v.value("sol_memory_pct", 0.0)});
      }
    }
  }
  const double bar_top = plot_bottom + 70;
  const double height = bar_top + 22.0 * static_cast<double>(bars.size()) + 30;
  std::string svg = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{:.0f}" height="{:.0f}" viewBox="0 0 {:.0f} {:.0f}">)"
      "\n<style>.axis{{stroke:#333}} .grid{{stroke:#ddd}} .roof{{stroke:#c0392b;stroke-width:2;fill:none}} "
      ".point{{fill:#2471a3}} .label{{font:11px sans-serif}} .title{{font:bold 14px sans-serif}} .bar{{fill:#27ae60}}</style>\n"
      R"(<text x="{:.0f}" y="24" class="title">Roofline: {} ceilings ({})</text>)"
      "\n",
      width, height, width, height, plot_left, xml_escaped(ceilings.value("source", "no")),
      xml_escaped(results.value("started_at", "")));
  for (int decade = -2; decade <= 3; ++decade) {
    const double x = px(std::pow(10.0, decade));
    svg += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.0f}" x2="{0:.1f}" y2="{2:.0f}" class="grid"/><text x="{0:.1f}" y="{3:.0f}" class="label">1e{4}</text>)"
                       "\n",
                       x, plot_top, plot_bottom, plot_bottom + 16, decade);
  }
  for (int decade = 9; decade <= 15; ++decade) {
    const double y = py(std::pow(10.0, decade));
    svg += fmt::format(R"(<line x1="{0:.0f}" y1="{1:.1f}" x2="{2:.0f}" y2="{1:.1f}" class="grid"/><text x="10" y="{3:.1f}" class="label">1e{4} FLOP/s</text>)"
                       "\n",
                       plot_left, y, plot_right, y + 4, decade);
  }
  svg += fmt::format(R"(<text x="{:.0f}" y="{:.0f}" class="label">arithmetic intensity (FLOP per byte)</text>)" "\n",
                     (plot_left + plot_right) / 2 - 90, plot_bottom + 34);
  const double bandwidth = ceilings.value("memory_bytes_per_s", 0.0);
  const double peak = ceilings.value("fp32_flops_per_s", 0.0);
  if (bandwidth > 0 && peak > 0) {
    const double ridge = peak / bandwidth;
    svg += fmt::format(R"(<polyline class="roof" points="{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}"/>)" "\n", px(x_min),
                       py(bandwidth * x_min), px(ridge), py(peak), px(x_max), py(peak));
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="label">FP32 {:.1f} TFLOP/s; memory {:.0f} GB/s; ridge {:.1f} FLOP/B</text>)" "\n",
                       px(ridge) + 6, py(peak) - 8, peak / 1e12, bandwidth / 1e9, ridge);
  }
  if (bandwidth > 0 && peak <= 0) {  // a host run: the memory roof only
    svg += fmt::format(R"(<polyline class="roof" points="{:.1f},{:.1f} {:.1f},{:.1f}"/>)" "\n", px(x_min), py(bandwidth * x_min),
                       px(x_max), py(bandwidth * x_max));
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="label">memory {:.0f} GB/s (no compute ceiling known)</text>)" "\n",
                       px(1.0) + 6, py(bandwidth) - 8, bandwidth / 1e9);
  }
  svg += points;
  svg += fmt::format(R"(<text x="{:.0f}" y="{:.0f}" class="title">Variants without FLOPs: share of the memory ceiling (SOL %)</text>)" "\n",
                     plot_left, bar_top - 12);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double y = bar_top + 22.0 * static_cast<double>(i);
    const double length = std::clamp(bars[i].sol, 0.0, 120.0) * 3.0;
    svg += fmt::format(R"(<rect x="{:.0f}" y="{:.0f}" width="{:.1f}" height="16" class="bar"/><text x="{:.1f}" y="{:.0f}" class="label">{:.0f}% {}</text>)"
                       "\n",
                       plot_left, y, length, plot_left + length + 6, y + 12, bars[i].sol, xml_escaped(bars[i].label));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace aisp
