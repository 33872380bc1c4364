// A shared library without aisp_plugin_abi_version: `--plugin` must refuse it by name.
extern "C" int not_a_plugin_answer() { return 42; }
