// A job's progress as server-sent events (GET /api/v1/jobs/{job}/events, text/event-stream): what
// a follower has not yet been sent, worked out from the job's status and its count of output
// lines, so the HTTP side only polls and writes. Events, each with a JSON `data` line:
//   progress  {state, pairs_done, pairs_total}   on the first call and whenever either changes
//   line      {text}                             each output line the job printed since, with the
//                                                line's number as its id, so a client that
//                                                reconnects (Last-Event-ID) is sent only the rest
//   end       the job's full status (results included)   once, when it is no longer running
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace aisp::serve {

// What one follower has been sent.
struct job_event_cursor {
  std::size_t lines_sent = 0;
  int pairs_done = -1;  // -1: nothing sent yet
  std::string state;
  bool ended = false;  // the end event went out: the stream closes
};

// One event in the text/event-stream format: "event: NAME\ndata: JSON\n\n", after "id: ID\n"
// when `id` is not empty.
[[nodiscard]] std::string sse_frame(std::string_view event, const nlohmann::json& data, std::string_view id = "");

// Where a follower starts: after the line its Last-Event-ID header names ("" or anything but a
// line number: from the start).
[[nodiscard]] job_event_cursor cursor_after(std::string_view last_event_id);

// The frames that bring `cursor` up to `status` (a job_table status: state, pairs_done,
// pairs_total, last_lines) given the job's `lines_read`; advances the cursor. Lines that scrolled
// out of last_lines before a follower saw them are counted in a `line` event, not lost silently.
[[nodiscard]] std::string job_events_since(const nlohmann::json& status, std::size_t lines_read, job_event_cursor& cursor);

}  // namespace aisp::serve
