// Note [plugin load probe]: loading a plugin runs its code in the judge (a library's static
// initializers; a Python pair file's module code, through the bridge). Code that crashes or ends
// the process there would take the judge down without a word, before any result exists. So the
// CLI first loads each plugin in a forked child: a child that dies (a signal) or ends (exit,
// os._exit) before it could say that the load returned is reported in one line, naming the
// plugin or pair files, and nothing is loaded in the judge. A load that fails in the ordinary
// way (a contract_error) is left to the judge's own load, which says why in its words.
#pragma once

#include <string>
#include <vector>

namespace aisp {

// Throws contract_error for the first plugin whose load ends its process.
void probe_plugin_loads(const std::vector<std::string>& paths);

}  // namespace aisp
