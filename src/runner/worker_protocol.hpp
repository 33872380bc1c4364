// The judge-worker protocol: one JSON object per line. The parent writes requests to the
// worker's stdin; the worker answers on a private copy of its stdout (fd 1 itself is pointed at
// stderr, so nothing a variant or a library prints can forge an answer).
//
//   {"op":"init","target":T,"variant":V,"mode":"cold","seed":N,"device":0}  -> {"ok":true}
//   {"op":"load","workload":{"kind":"validation","params":{...}}}           -> {"ok":true,"load":{...,"notes":{...}}}
//   {"op":"load","workload":W,"benchmark":true}   inputs from the device generator (Note [fresh calls])
//   {"op":"sample","count":K,"input_base":S,"fill_base":F,"verify":I}       -> {"ok":true,"samples":[...],"verified":{...}|null}
//   {"op":"probe","positions_seed":P,"count":N}   -> {"ok":true,"values":{...}}: the verified sample's kept outputs
//   {"op":"truth","input_seed":S,"positions_seed":P,"count":N,"extra":{...}} one untimed call on S's inputs
//   {"op":"outputs","prefix":P[,"input_seed":S]}                           -> {"ok":true,"files":{...}}
//   {"op":"exit"}                                                           -> {"ok":true}
//   any failure                                            -> {"ok":false,"kind":"cuda|contract|exception","message":M}
#pragma once

#include <nlohmann/json.hpp>

#include "aisp/workload.hpp"
#include "harness/timing.hpp"
#include "harness/variant_notes.hpp"

namespace aisp::protocol {

[[nodiscard]] nlohmann::json workload_to_json(const workload& work);
[[nodiscard]] workload workload_from_json(const nlohmann::json& j);
[[nodiscard]] nlohmann::json sample_to_json(const sample_record& record);
[[nodiscard]] sample_record sample_from_json(const nlohmann::json& j);
// A load's notes (run_context::note()) as a JSON object of strings, and back: the judge applies
// the same bounds again, so no reply carries more than a variant may note.
[[nodiscard]] nlohmann::json notes_to_json(const variant_notes& notes);
[[nodiscard]] variant_notes notes_from_json(const nlohmann::json& j);

}  // namespace aisp::protocol
