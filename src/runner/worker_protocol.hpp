// The judge-worker protocol, version 1 (docs/worker_protocol.md has every request and reply):
// one JSON object per line; the parent writes requests to the worker's stdin, the worker answers
// on a private copy of its stdout (fd 1 itself points at an anonymous file, so nothing a variant
// or a library prints can forge an answer).
#pragma once

#include <nlohmann/json.hpp>

#include "aisp/workload.hpp"
#include "harness/timing.hpp"
#include "harness/variant_notes.hpp"

namespace aisp::protocol {

// In init's reply; the judge refuses a worker that speaks another version. An optional field
// added keeps it; a field renamed, removed or given another meaning bumps it.
inline constexpr int version = 1;

[[nodiscard]] nlohmann::json workload_to_json(const workload& work);
[[nodiscard]] workload workload_from_json(const nlohmann::json& j);
[[nodiscard]] nlohmann::json sample_to_json(const sample_record& record);
[[nodiscard]] sample_record sample_from_json(const nlohmann::json& j);
// A load's notes (run_context::note()) as a JSON object of strings, and back: the judge applies
// the same bounds again, so no reply carries more than a variant may note.
[[nodiscard]] nlohmann::json notes_to_json(const variant_notes& notes);
[[nodiscard]] variant_notes notes_from_json(const nlohmann::json& j);

}  // namespace aisp::protocol
