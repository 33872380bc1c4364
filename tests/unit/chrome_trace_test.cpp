#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>

#include "profile/chrome_trace.hpp"

namespace {

using aisp::activity_kind;
using aisp::timeline_activity;
using nlohmann::json;

timeline_activity activity(activity_kind kind, std::string name, std::uint64_t start_ns, std::uint64_t end_ns,
                           std::uint32_t device = 0, std::uint32_t stream = 0) {
  timeline_activity a;
  a.kind = kind;
  a.name = std::move(name);
  a.start_ns = start_ns;
  a.end_ns = end_ns;
  a.device = device;
  a.stream = stream;
  return a;
}

// Two variants. The optimized lane starts first (its copy at 999'000 ns), so it sets the origin
// for both. The baseline's activities are listed out of time order on purpose.
std::vector<aisp::trace_lane> two_lanes() {
  auto kernel = activity(activity_kind::kernel, "reduce_atomic_kernel", 1'100'000, 1'102'500, 0, 7);
  kernel.correlation = 42;
  kernel.launch_type = 1;
  kernel.access_policy_window = true;
  aisp::trace_lane baseline{"baseline", {kernel, activity(activity_kind::phase, "warmup", 1'000'000, 1'500'000)}};
  auto copy = activity(activity_kind::memcpy, "HtoD", 999'000, 1'001'000, 0, 13);
  copy.bytes = 4096;
  aisp::trace_lane optimized{
      "optimized",
      {copy, activity(activity_kind::kernel, "reduce_warp_kernel", 1'010'000, 1'010'750, 1, 2),
       activity(activity_kind::event, "cudaEventRecord", 1'050'000, 1'050'000, 0, 13)}};
  return {baseline, optimized};
}

const json& only_event(const json& trace, const std::string& name, const std::string& ph) {
  const auto& events = trace["traceEvents"];
  const auto matches = [&](const json& e) { return e["name"] == name && e["ph"] == ph; };
  EXPECT_EQ(std::count_if(events.begin(), events.end(), matches), 1) << name << " " << ph;
  return *std::find_if(events.begin(), events.end(), matches);
}

const json& thread_name_event(const json& trace, std::int64_t pid, std::int64_t tid) {
  const auto& events = trace["traceEvents"];
  const auto it = std::find_if(events.begin(), events.end(), [&](const json& e) {
    return e["name"] == "thread_name" && e["pid"] == pid && e["tid"] == tid;
  });
  EXPECT_NE(it, events.end()) << "no thread_name for pid " << pid << " tid " << tid;
  return *it;
}

TEST(chrome_trace, two_lanes_with_kernels_copies_phases_and_events_validate_clean) {
  const json trace = aisp::chrome_trace(two_lanes(), {{"run", "r1"}});
  EXPECT_TRUE(aisp::trace_format_problems(trace).empty()) << ::testing::PrintToString(aisp::trace_format_problems(trace));
  EXPECT_EQ(trace["displayTimeUnit"], "ns");
  EXPECT_EQ(trace["otherData"]["run"], "r1");
}

TEST(chrome_trace, each_lane_is_a_named_process_numbered_from_one_in_lane_order) {
  const json trace = aisp::chrome_trace(two_lanes(), json::object());
  const auto& events = trace["traceEvents"];
  std::vector<std::pair<std::int64_t, std::string>> names;
  for (const auto& e : events) {
    if (e["name"] == "process_name") names.emplace_back(e["pid"].get<std::int64_t>(), e["args"]["name"].get<std::string>());
  }
  EXPECT_EQ(names, (std::vector<std::pair<std::int64_t, std::string>>{{1, "baseline"}, {2, "optimized"}}));
  EXPECT_EQ(std::count_if(events.begin(), events.end(), [](const json& e) { return e["name"] == "process_sort_index"; }), 2);
}

TEST(chrome_trace, all_lanes_share_the_earliest_start_as_time_origin) {
  const json trace = aisp::chrome_trace(two_lanes(), json::object());
  // The origin is the optimized lane's copy at 999'000 ns: the baseline's warmup (1'000'000 ns)
  // is 1 us after it, not 0.
  EXPECT_DOUBLE_EQ(only_event(trace, "HtoD", "X")["ts"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(only_event(trace, "warmup", "X")["ts"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(only_event(trace, "reduce_atomic_kernel", "X")["ts"].get<double>(), 101.0);
  EXPECT_DOUBLE_EQ(only_event(trace, "cudaEventRecord", "i")["ts"].get<double>(), 51.0);
}

TEST(chrome_trace, durations_are_in_microseconds) {
  const json trace = aisp::chrome_trace(two_lanes(), json::object());
  EXPECT_DOUBLE_EQ(only_event(trace, "reduce_atomic_kernel", "X")["dur"].get<double>(), 2.5);   // 2'500 ns
  EXPECT_DOUBLE_EQ(only_event(trace, "reduce_warp_kernel", "X")["dur"].get<double>(), 0.75);  // 750 ns
  EXPECT_DOUBLE_EQ(only_event(trace, "HtoD", "X")["dur"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(only_event(trace, "warmup", "X")["dur"].get<double>(), 500.0);
}

TEST(chrome_trace, phases_go_on_thread_zero_and_device_work_on_one_thread_per_stream) {
  const json trace = aisp::chrome_trace(two_lanes(), json::object());
  EXPECT_EQ(only_event(trace, "warmup", "X")["tid"], 0);
  EXPECT_EQ(only_event(trace, "warmup", "X")["cat"], "phase");
  EXPECT_EQ(only_event(trace, "reduce_atomic_kernel", "X")["tid"], 8);   // device 0, stream 7
  EXPECT_EQ(only_event(trace, "reduce_warp_kernel", "X")["tid"], 1003);  // device 1, stream 2
  EXPECT_EQ(only_event(trace, "HtoD", "X")["tid"], 14);                  // device 0, stream 13
  EXPECT_EQ(thread_name_event(trace, 1, 0)["args"]["name"], "phases");
  EXPECT_EQ(thread_name_event(trace, 1, 8)["args"]["name"], "GPU 0 stream 7");
  EXPECT_EQ(thread_name_event(trace, 2, 1003)["args"]["name"], "GPU 1 stream 2");
}

TEST(chrome_trace, kinds_become_categories_and_carry_their_arguments) {
  const json trace = aisp::chrome_trace(two_lanes(), json::object());
  const json& kernel = only_event(trace, "reduce_atomic_kernel", "X");
  EXPECT_EQ(kernel["cat"], "kernel");
  EXPECT_EQ(kernel["args"]["correlation"], 42);
  EXPECT_EQ(kernel["args"]["launch_type"], 1);
  EXPECT_EQ(kernel["args"]["access_policy_window"], true);
  EXPECT_EQ(kernel["args"]["device_launched"], false);
  const json& copy = only_event(trace, "HtoD", "X");
  EXPECT_EQ(copy["cat"], "memcpy");
  EXPECT_EQ(copy["args"]["bytes"], 4096);
  const json& mark = only_event(trace, "cudaEventRecord", "i");
  EXPECT_EQ(mark["cat"], "event");
  EXPECT_EQ(mark["s"], "t");
  EXPECT_FALSE(mark.contains("dur"));
}

TEST(chrome_trace, events_are_sorted_by_time_within_each_lane) {
  const json trace = aisp::chrome_trace(two_lanes(), json::object());
  std::map<std::int64_t, std::vector<double>> times_by_pid;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "M") times_by_pid[e["pid"].get<std::int64_t>()].push_back(e["ts"].get<double>());
  }
  ASSERT_EQ(times_by_pid.size(), 2u);
  EXPECT_EQ(times_by_pid[1], (std::vector<double>{1.0, 101.0}));  // warmup listed second, drawn first
  for (const auto& [pid, times] : times_by_pid) EXPECT_TRUE(std::is_sorted(times.begin(), times.end())) << pid;
}

TEST(chrome_trace, a_record_ending_before_it_starts_gets_zero_duration_and_is_flagged) {
  const json trace = aisp::chrome_trace({{"baseline", {activity(activity_kind::kernel, "k", 2'000, 1'000)}}}, json::object());
  EXPECT_DOUBLE_EQ(only_event(trace, "k", "X")["dur"].get<double>(), 0.0);
  EXPECT_EQ(only_event(trace, "k", "X")["args"]["end_before_start"], true);
  EXPECT_TRUE(aisp::trace_format_problems(trace).empty());
}

TEST(chrome_trace, no_lanes_make_an_empty_but_valid_trace) {
  const json trace = aisp::chrome_trace({}, nullptr);
  EXPECT_TRUE(trace["traceEvents"].empty());
  EXPECT_TRUE(trace["otherData"].is_object());
  EXPECT_TRUE(aisp::trace_format_problems(trace).empty());
}

// One broken trace per problem: each must be reported, and only once.
json one_event_trace(json event) { return {{"traceEvents", json::array({std::move(event)})}}; }

void expect_one_problem_mentioning(const json& trace, const std::string& words) {
  const auto problems = aisp::trace_format_problems(trace);
  ASSERT_EQ(problems.size(), 1u) << ::testing::PrintToString(problems);
  EXPECT_NE(problems[0].find(words), std::string::npos) << problems[0];
}

TEST(trace_format_problems, reports_a_trace_without_trace_events) {
  expect_one_problem_mentioning(json::object({{"displayTimeUnit", "ns"}}), "traceEvents");
  expect_one_problem_mentioning(json::array(), "not a JSON object");
}

TEST(trace_format_problems, reports_a_complete_event_without_duration) {
  expect_one_problem_mentioning(one_event_trace({{"name", "k"}, {"ph", "X"}, {"pid", 1}, {"tid", 1}, {"ts", 0.0}}),
                                "without numeric dur");
}

TEST(trace_format_problems, reports_a_negative_timestamp) {
  expect_one_problem_mentioning(
      one_event_trace({{"name", "k"}, {"ph", "X"}, {"pid", 1}, {"tid", 1}, {"ts", -1.0}, {"dur", 1.0}}), "negative ts");
}

TEST(trace_format_problems, reports_a_negative_duration) {
  expect_one_problem_mentioning(
      one_event_trace({{"name", "k"}, {"ph", "X"}, {"pid", 1}, {"tid", 1}, {"ts", 1.0}, {"dur", -0.5}}), "negative dur");
}

TEST(trace_format_problems, reports_a_metadata_event_without_args_name) {
  expect_one_problem_mentioning(one_event_trace({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0}}),
                                "args.name");
  expect_one_problem_mentioning(
      one_event_trace({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", 3}}}}),
      "args.name");
}

TEST(trace_format_problems, reports_unknown_phases_missing_names_and_non_integer_ids) {
  expect_one_problem_mentioning(one_event_trace({{"name", "k"}, {"ph", "Q"}, {"pid", 1}, {"tid", 1}}), "ph \"Q\"");
  expect_one_problem_mentioning(one_event_trace({{"ph", "i"}, {"pid", 1}, {"tid", 1}, {"ts", 0}}), "no string name");
  expect_one_problem_mentioning(one_event_trace({{"name", "k"}, {"ph", "i"}, {"pid", 1.5}, {"tid", 1}, {"ts", 0}}),
                                "integer pid");
  expect_one_problem_mentioning(one_event_trace({{"name", "k"}, {"ph", "B"}, {"pid", 1}, {"tid", 1}}), "without numeric ts");
}

class temporary_directory {
 public:
  temporary_directory()
      : path_(std::filesystem::temp_directory_path() / ("aisp_chrome_trace_test_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~temporary_directory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

TEST(write_chrome_trace, writes_a_file_that_reads_back_as_the_same_trace_and_leaves_no_temporary) {
  const temporary_directory directory;
  const auto file = directory.path() / "trace.json";
  const json trace = aisp::chrome_trace(two_lanes(), {{"run", "r1"}});
  aisp::write_chrome_trace(file, trace);
  std::ifstream in(file);
  const json read_back = json::parse(in);
  EXPECT_EQ(read_back, trace);
  EXPECT_TRUE(aisp::trace_format_problems(read_back).empty());
  EXPECT_FALSE(std::filesystem::exists(directory.path() / "trace.json.tmp"));
}

TEST(write_chrome_trace, throws_a_one_line_message_when_the_directory_does_not_exist) {
  const temporary_directory directory;
  try {
    aisp::write_chrome_trace(directory.path() / "missing" / "trace.json", json::object());
    FAIL() << "no exception";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("cannot write Chrome trace"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
