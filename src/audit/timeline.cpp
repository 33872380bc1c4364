#include "audit/timeline.hpp"

namespace aisp {

std::string_view activity_kind_name(activity_kind kind) {
  switch (kind) {
    case activity_kind::kernel: return "kernel";
    case activity_kind::memcpy: return "memcpy";
    case activity_kind::memset: return "memset";
    case activity_kind::jit: return "jit";
    case activity_kind::event: return "event";
    case activity_kind::phase: return "phase";
    case activity_kind::unified_memory: return "unified-memory";
    case activity_kind::api: return "api";
  }
  return "unknown";  // an out-of-range value cast into the enum
}

}  // namespace aisp
