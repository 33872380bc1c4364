// Loads users' plugins into the registry, in the judge and in every worker (Note [plugins]).
#pragma once

#include <string>
#include <vector>

namespace aisp {

// Loads each plugin once. A missing file, a library
// that is not an aisp plugin, another ABI, a duplicate target or a broken contract is a
// contract_error naming the plugin: a one-line error and exit 2 at the CLI.
void load_plugins(const std::vector<std::string>& paths);

}  // namespace aisp
