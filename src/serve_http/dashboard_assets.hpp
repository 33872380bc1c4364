// The dashboard's files, embedded in the serve module at build time (cmake/aisp_embed_dashboard.cmake
// writes the table from web/ and the pinned uPlot), so `aisp serve` reads nothing from disk to
// serve a page: a path is either a key of this table or a 404, whatever dots or escapes it holds.
#pragma once

#include <string_view>
#include <vector>

namespace aisp::serve {

struct embedded_asset {
  std::string_view path;          // "/index.html", "/js/pages/runs.js", "/vendor/uPlot.iife.min.js"
  std::string_view content_type;  // from the file's extension
  std::string_view bytes;
};

// Every embedded file (generated).
[[nodiscard]] const std::vector<embedded_asset>& embedded_assets();
// The file a request path names, by exact match ("/" is /index.html); nullptr for anything else.
[[nodiscard]] const embedded_asset* find_dashboard_asset(std::string_view path);

}  // namespace aisp::serve
