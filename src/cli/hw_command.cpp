// `aisp hw [GROUP]`: measure this card's ceilings (memory, caches, FP32, tensor cores, PCIe,
// launch costs, P2P and NCCL with two GPUs), print each probe's method, size, median and
// spread, and cache them per device UUID and driver for SOL % and the physics gate.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/number_checks.hpp"
#include "hw/hw_suite.hpp"

namespace aisp::cli {

void add_hw_command(CLI::App& app, outcome& result) {
  auto* hw = app.add_subcommand("hw",
                                "Measure this GPU's ceilings: memory (copy, triad), cache (L2, shared, latency ladder),\n"
                                "fp32 (FMA), tensor (cuBLASLt bf16/fp16/tf32/fp8), pcie, launch, p2p and nccl (2+ GPUs).\n"
                                "Results are cached per GPU UUID and driver; --refresh measures again. Never changes clocks.");
  auto group = std::make_shared<std::string>("all");
  auto as_json = std::make_shared<bool>(false);
  auto refresh = std::make_shared<bool>(false);
  auto device = std::make_shared<int>(0);
  hw->add_option("group", *group, "all (default), memory, cache, fp32, tensor, pcie, launch, p2p or nccl");
  hw->add_flag("--json", *as_json, "print machine-readable JSON");
  hw->add_flag("--refresh", *refresh, "measure again even when cached");
  hw->add_option("--device", *device, "CUDA device index (default 0)")->check(non_negative_number);
  hw->callback([=, &result] {
    const bool chatty = !*as_json && isatty(STDERR_FILENO);
    hw_report report;
    try {
      report = run_hw(*group, *device, *refresh, [chatty](const std::string& line) {
        if (chatty) std::fprintf(stderr, "%s\n", line.c_str());
      });
    } catch (const no_gpu_error& error) {
      std::fprintf(stderr, "aisp: hw: %s; nothing was measured\n", error.what());
      // A script reading --json gets JSON either way (it got nothing on stdout before).
      if (*as_json) std::printf("%s\n", nlohmann::json{{"measured", false}, {"gpu", nullptr}, {"reason", error.what()}}.dump(2).c_str());
      result.exit_code = 3;
      return;
    }
    if (*as_json) {
      std::printf("%s\n", to_json(report).dump(2).c_str());
    } else {
      std::printf("%s", render_text(report).c_str());
    }
    result.exit_code = 0;
  });
}

}  // namespace aisp::cli
