// Note [untrusted pairs]: the judge never loads a user's plugin (a C++ library, the Python
// bridge with a pair file, the executable-pairs bridge with its JSON); a sandboxed worker, the
// pair host, loads it and serves its pairs to the judge as data and answers.
#pragma once

#include <string>
#include <vector>

namespace aisp {

// Loads each plugin in the pair host and registers the judge's copy of each of its pairs.
// Throws contract_error, naming the plugin or pair file, for a plugin that fails to load or
// whose load ends the host.
void host_user_plugins(const std::vector<std::string>& paths);

}  // namespace aisp
