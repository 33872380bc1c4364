// Bad usage of every command: exit code 2, one line that names the problem, no source paths, and
// no work done first (issue 17). Each case must fail before any pair runs or any file is read.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"

namespace {

using aisp::testing::run_command;

struct bad_case {
  std::string args;  // after `aisp `
  std::string says;  // a part of the one line
};

class bad_usage : public ::testing::TestWithParam<bad_case> {};

TEST_P(bad_usage, is_one_readable_line_and_exit_code_2) {
  const auto& c = GetParam();
  const auto run = run_command("cd " + std::filesystem::temp_directory_path().string() + " && timeout 60 " +
                               aisp::testing::aisp_binary() + " " + c.args);
  EXPECT_EQ(run.exit_code, 2) << c.args << ":\n" << run.output;
  EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << c.args << ":\n" << run.output;
  EXPECT_NE(run.output.find(c.says), std::string::npos) << c.args << ":\n" << run.output;
  EXPECT_EQ(run.output.find(".cpp:"), std::string::npos) << c.args << ": a source location reached the user:\n" << run.output;
}

const std::vector<bad_case> cases{
    {"frobnicate", "frobnicate"},
    {"info --frobnicate", "frobnicate"},
    {"bench run --target labs/host", "'aisp bench run' takes no option --target; did you mean --targets?"},
    {"hw memory --jsn", "'aisp hw' takes no option --jsn; did you mean --json?"},
    {"hw lukewarm", "lukewarm"},
    {"new pair Not-A-Target", "group:name"},
    {"bench run --targets labs/host --l2-flush sideways", "--l2-flush"},
    {"bench run --targets labs/host --gpus two", "--gpus wants all, a count or a list"},
    {"bench run --targets labs/host --gpus 0,0", "listed twice"},
    {"bench run --targets ch99:nothing", "unknown target 'ch99:nothing'"},
    {"bench run --targets ''", "--targets names no pair"},
    {"bench run --targets labs/host --artifacts-dir /proc/no/such/place", "--artifacts-dir /proc/no/such/place: cannot make the folder"},
    {"bench run --targets labs/host --size rows", "--size wants name=value"},
    {"bench run --targets labs/host --size n=12x", "not an integer"},
    {"bench run --targets labs/host:matrix_sum --size nope=4", "has no benchmark parameter 'nope'"},
    {"bench run --targets labs/host:matrix_sum --size rows=999999999999", "does not fit in host memory"},
    {"bench run --targets labs/host:transpose --size rows=9223372036854775807", "more than 2^63; choose a smaller --size"},
    {"bench run --targets labs/host --verify-phase quarantine --quarantine-file /", "is a directory"},
    {"bench run --targets labs/host --mode lukewarm", "lukewarm"},
    {"bench run --targets labs/host --max-time -1", "--max-time: wants a number above 0, not '-1'"},
    {"bench verify --targets labs/host --seed -3", "--seed: wants a whole number from 0 to 18446744073709551615, not '-3'"},
    {"bench run --targets labs/host --seed 18446744073709551616", "not '18446744073709551616'"},
    {"bench run --targets labs/host --min-samples 3", "a speedup needs at least 10 samples a variant (S5"},
    {"bench run --targets labs/host --min-samples 99999999999", "--min-samples 99999999999: at most 1000000"},
    {"bench run --targets labs/host --judge-threads 5000", "--judge-threads 5000: at most 1024"},
    {"bench run --targets labs/host --energy-window x", "--energy-window: wants a number from 0 to 60"},
    {"hw all --device -1", "wants a number of 0 or more"},
    {"bench verify --targets ch99:nothing", "unknown target"},
    {"bench list-targets --chapter ch99", "ch99"},
    {"bench audit --targets ch99:nothing", "unknown target"},
    {"bench scaling --target labs/host:matrix_sum --sizes rows", "--size wants name=value"},
    {"bench scaling --target labs/host:matrix_sum --sizes rows=4096 rows=999999999999", "does not fit"},
    {"bench scaling --target ch99:x --sizes n=4", "unknown target"},
    {"bench scaling --target labs/host:matrix_sum --sizes rows=4 --max-time 0", "wants a number above 0"},
    {"bench roofline --run /nonexistent/run", "/nonexistent/run"},
    {"profile", "aisp profile needs a command: ncu"},
    {"profile --target x", "aisp profile needs a command: ncu"},
    {"", "aisp needs a command: info, bench"},
    {"bench frobnicate", "unknown command 'aisp bench frobnicate' (aisp bench has: run, verify"},
    {"bench compare run1 run2", "did you mean 'aisp bench compare-runs'?"},
    {"bench run --targets labs/host --min-time 9 --max-time 1", "--min-time 9 is more than --max-time 1"},
    {"bench explain nope", "no validity row or check named 'nope'"},
    {"bench explain", "checks"},
    {"tools", "aisp tools needs a command: kv-cache"},
    {"tools kv-cache --model gpt-9 --tokens 8", "unknown model 'gpt-9'"},
    {"tools kv-cache --tokens 8", "name a --model"},
    {"tools kv-cache --model mistral-7b --tokens 8 --dtype int3", "unknown KV-cache dtype"},
    {"tools kv-cache --model mistral-7b --tokens 0", "--tokens"},
    {"tools cost-per-token --tokens-per-s 100 --prices /nonexistent/prices.json", "cannot read the price table"},
    {"tools cost-per-token --tokens-per-s -5 --usd-per-hour 2", "--tokens-per-s"},
    {"profile ncu --targets ch07 --ncu /nonexistent/ncu", "--ncu /nonexistent/ncu does not exist"},
    {"profile ncu --targets ch07 --launches 0", "--launches"},
    {"profile ncu", "--targets"},
    {"bench report --run /nonexistent/run", "/nonexistent/run"},
    {"bench report --run /nonexistent/run --format docx", "docx"},
    {"bench compare-runs", "required"},
    {"bench compare-runs /tmp/no_run_a /tmp/no_run_b", "no results at /tmp/no_run_a"},
    {"bench compare-runs 1 /tmp/no_run_b", "two run ids of the history or two runs' folders, not one of each"},
    {"new pair ch07:made_here --dir /proc/no/such/place", "--dir /proc/no/such/place: cannot make the folder"},
    {"new pair ch07:made_here --dir /etc/hostname", "--dir /etc/hostname is a file, not a folder"},
    {"triage --output /nonexistent_aisp/bundle.tar.gz", "is not a folder this user can write to"},
    {"bench expectations --hardware", "hardware"},
    {"bench expectations --hardware ../../etc", "--hardware wants a card key such as h100"},
    {"bench expectations --hardware h100 --run /tmp/any_run", "--run is read with --update (write its speedups) or --check"},
    {"bench expectations --hardware h100 --check --update --run /tmp/any_run", "--check and --update together"},
    {"bench run --targets labs/host --golden-file /etc/os-release", "malformed golden file /etc/os-release"},
    {"bench history --limit 0", "--limit: wants a number above 0, not '0'"},
    {"tools kv-cache --model mistral-7b --tokens 8 --batch -1", "--batch: wants a number above 0, not '-1'"},
    {"bench cost --run /nonexistent/run", "no results at /nonexistent/run"},
    {"bench whatif --run /nonexistent/run", "/nonexistent/run"},
    {"bench run --targets labs/host --json /proc/no/such/r.json", "--json /proc/no/such/r.json: cannot make the folder /proc/no/such"},
    {"bench run --targets labs/host --json /etc/hostname/r.json", "cannot make the folder /etc/hostname"},
    {"bench run --targets labs/host --json /tmp", "is a folder; name a file"},
    {"bench whatif --run /tmp/any_run --vram -4", "--vram: wants a number of 0 or more, not '-4'"},
    {"bench whatif --run /tmp/any_run --latency nan", "--latency: wants a number of 0 or more, not 'nan'"},
    {"bench expectations --hardware h100 --update --run /tmp/any_run --min-speedup 0", "--min-speedup: wants a number above 0"},
};

INSTANTIATE_TEST_SUITE_P(every_command, bad_usage, ::testing::ValuesIn(cases),
                         [](const ::testing::TestParamInfo<bad_case>& param_info) { return "case_" + std::to_string(param_info.index); });

// `aisp profile ncu` without Nsight Compute: one line saying so, before any pair is selected or
// run (issue 22: a missing ncu is a clear message, and `bench run` needs none).
TEST(profile_ncu, without_ncu_on_path_says_so_in_one_line) {
  const auto run = run_command("cd " + std::filesystem::temp_directory_path().string() + " && env PATH=/nonexistent " +
                               aisp::testing::aisp_binary() + " profile ncu --targets ch07");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << run.output;
  EXPECT_NE(run.output.find("ncu (Nsight Compute) is not on PATH"), std::string::npos) << run.output;
}

// Outside a checkout (the cases above run in the temp folder), the price table shipped with aisp
// is the default: it holds no prices, so the cost says which entry to fill, not that it found no
// table.
TEST(shipped_data, the_price_table_is_found_outside_a_checkout) {
  const auto run = run_command("cd " + std::filesystem::temp_directory_path().string() + " && timeout 60 " +
                               aisp::testing::aisp_binary() + " tools cost-per-token --tokens-per-s 100");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("no price for 'h100' in "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("share/aisp/expectations/prices.json"), std::string::npos) << run.output;
}

// --layers beside --model overrides the model's count (it was silently ignored), and the output
// names the change.
TEST(kv_cache, layers_beside_a_model_override_its_count) {
  const auto whole = run_command(aisp::testing::aisp_binary() + " tools kv-cache --model llama-3.1-8b --tokens 1024 --free-gib 10 --json");
  const auto cut = run_command(aisp::testing::aisp_binary() + " tools kv-cache --model llama-3.1-8b --layers 16 --tokens 1024 --free-gib 10 --json");
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  ASSERT_EQ(cut.exit_code, 0) << cut.output;
  const auto a = nlohmann::json::parse(whole.output);
  const auto b = nlohmann::json::parse(cut.output);
  EXPECT_EQ(b["layers"], 16);
  EXPECT_EQ(b["bytes_per_token"].get<double>() * 2, a["bytes_per_token"].get<double>());
  EXPECT_EQ(b["model"], "llama-3.1-8b (layers 16)");
}

}  // namespace
