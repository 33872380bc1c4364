// File names and programs: a target as a file name, a tool found the way a shell finds it, and
// the data files aisp ships.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace aisp {

// A target ("ch08:loop_unrolling", "labs/gemm:bf16_4096") as one file name: ':' and '/' become '_'.
[[nodiscard]] std::string file_safe(std::string text);

// The first executable `name` in $PATH's directories, then in `also_in` (e.g. /usr/local/cuda/bin,
// where the CUDA tools live when PATH leaves it out); "" when there is none.
[[nodiscard]] std::string find_program(std::string_view name, const std::vector<std::string>& also_in = {});

// A data file aisp ships (expectations/prices.json, expectations/goldens.json): `relative` where
// it exists from the current folder (a checkout, whose copy a user edits), else the copy under
// share/aisp/ beside the executable's bin/ (the build tree and an install keep that layout);
// `relative` itself when neither exists, so that an error names the file a user would make.
[[nodiscard]] std::string shipped_data_file(const std::string& relative);

// Note [artifacts folder]: where runs, profiles, the quarantine and the history go by default:
// $AISP_ARTIFACTS, else "artifacts" in the current folder. A CI job or a shared machine sets it
// once instead of passing --artifacts-dir and --db to every command.
[[nodiscard]] std::string artifacts_root();
// The history database commands read and write by default: $AISP_DB, else
// artifacts_root()/aisp.db.
[[nodiscard]] std::string default_history_db();

}  // namespace aisp
