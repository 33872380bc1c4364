// Note [one run a folder]: two runs into one --artifacts-dir wrote the same results.json, the
// later one replacing the earlier's while it still ran, and the history pointed both runs at one
// folder (a user's walkthrough, 2026-12-04). A run now holds an exclusive lock on the folder's
// .aisp.lock for its whole life; a second run into the folder is refused before any work.
#pragma once

#include <string>

namespace aisp::cli {

// Locks `folder` for this process's life, or throws contract_error naming the run that holds it.
void hold_artifacts_folder(const std::string& folder);

}  // namespace aisp::cli
