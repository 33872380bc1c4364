// A job's server-sent events (src/serve/job_events.hpp), from job statuses written by hand: what a
// follower is sent first, after new lines, after lines it missed, and at the end.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "serve/job_events.hpp"

namespace {

using nlohmann::json;
using aisp::serve::job_event_cursor;
using aisp::serve::job_events_since;

json running(int done, int total, json lines) {
  return {{"job", 1}, {"state", "running"}, {"pairs_done", done}, {"pairs_total", total}, {"last_lines", std::move(lines)}};
}

TEST(job_events, a_frame_is_an_event_line_a_data_line_and_a_blank_line) {
  EXPECT_EQ(aisp::serve::sse_frame("line", {{"text", "a\nb"}}), "event: line\ndata: {\"text\":\"a\\nb\"}\n\n");
}

TEST(job_events, the_first_call_sends_the_progress_and_every_line_so_far) {
  job_event_cursor cursor;
  const auto frames = job_events_since(running(0, 2, {"[1/2] labs/host:transpose"}), 1, cursor);
  EXPECT_EQ(frames,
            "event: progress\ndata: {\"pairs_done\":0,\"pairs_total\":2,\"state\":\"running\"}\n\n"
            "id: 1\nevent: line\ndata: {\"text\":\"[1/2] labs/host:transpose\"}\n\n");
  EXPECT_EQ(cursor.lines_sent, 1u);
  EXPECT_FALSE(cursor.ended);
}

TEST(job_events, nothing_new_sends_nothing_and_a_new_line_sends_only_that_line) {
  job_event_cursor cursor;
  (void)job_events_since(running(0, 2, {"one"}), 1, cursor);
  EXPECT_EQ(job_events_since(running(0, 2, {"one"}), 1, cursor), "");
  EXPECT_EQ(job_events_since(running(0, 2, {"one", "two"}), 2, cursor), "id: 2\nevent: line\ndata: {\"text\":\"two\"}\n\n");
}

TEST(job_events, a_pair_done_sends_progress_again) {
  job_event_cursor cursor;
  (void)job_events_since(running(0, 2, json::array()), 0, cursor);
  EXPECT_EQ(job_events_since(running(1, 2, json::array()), 0, cursor),
            "event: progress\ndata: {\"pairs_done\":1,\"pairs_total\":2,\"state\":\"running\"}\n\n");
}

TEST(job_events, lines_that_scrolled_out_before_the_follower_saw_them_are_counted) {
  job_event_cursor cursor;
  (void)job_events_since(running(0, 1, json::array()), 0, cursor);
  // 5 lines printed, the status keeps the last 2: 3 were never seen.
  EXPECT_EQ(job_events_since(running(0, 1, {"d", "e"}), 5, cursor),
            "event: line\ndata: {\"text\":\"(3 lines scrolled past)\"}\n\n"
            "id: 4\nevent: line\ndata: {\"text\":\"d\"}\n\n"
            "id: 5\nevent: line\ndata: {\"text\":\"e\"}\n\n");
}

TEST(job_events, a_follower_that_reconnects_after_line_n_is_sent_only_the_lines_after_it) {
  auto cursor = aisp::serve::cursor_after("2");
  const auto frames = job_events_since(running(0, 1, {"a", "b", "c"}), 3, cursor);
  EXPECT_EQ(frames.find("\"a\""), std::string::npos) << frames;
  EXPECT_EQ(frames.find("\"b\""), std::string::npos) << frames;
  EXPECT_NE(frames.find("id: 3\nevent: line\ndata: {\"text\":\"c\"}"), std::string::npos) << frames;
  EXPECT_EQ(aisp::serve::cursor_after("").lines_sent, 0u);
  EXPECT_EQ(aisp::serve::cursor_after("x7").lines_sent, 0u);
}

TEST(job_events, an_ended_job_sends_its_status_once_then_nothing) {
  job_event_cursor cursor;
  (void)job_events_since(running(1, 1, {"x"}), 1, cursor);
  json done = running(1, 1, {"x"});
  done["state"] = "done";
  done["exit_code"] = 0;
  const auto frames = job_events_since(done, 1, cursor);
  EXPECT_EQ(frames, "event: progress\ndata: {\"pairs_done\":1,\"pairs_total\":1,\"state\":\"done\"}\n\n" +
                        aisp::serve::sse_frame("end", done));
  EXPECT_TRUE(cursor.ended);
  EXPECT_EQ(job_events_since(done, 1, cursor), "");
}

}  // namespace
