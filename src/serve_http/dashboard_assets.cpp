#include "serve_http/dashboard_assets.hpp"

namespace aisp::serve {

const embedded_asset* find_dashboard_asset(std::string_view path) {
  if (path == "/") path = "/index.html";
  for (const auto& asset : embedded_assets()) {
    if (asset.path == path) return &asset;
  }
  return nullptr;
}

}  // namespace aisp::serve
