#include "serve/job_events.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace aisp::serve {

using nlohmann::json;

std::string sse_frame(std::string_view event, const json& data, std::string_view id) {
  // dump() escapes newlines, so one data line always holds the whole JSON.
  const auto frame = fmt::format("event: {}\ndata: {}\n\n", event, data.dump(-1, ' ', false, json::error_handler_t::replace));
  return id.empty() ? frame : fmt::format("id: {}\n{}", id, frame);
}

job_event_cursor cursor_after(std::string_view last_event_id) {
  job_event_cursor cursor;
  std::size_t line = 0;
  const auto [end, error] = std::from_chars(last_event_id.data(), last_event_id.data() + last_event_id.size(), line);
  if (error == std::errc() && end == last_event_id.data() + last_event_id.size()) cursor.lines_sent = line;
  return cursor;
}

std::string job_events_since(const json& status, std::size_t lines_read, job_event_cursor& cursor) {
  std::string frames;
  if (cursor.ended) return frames;
  const auto state = status.value("state", "");
  const int pairs_done = status.value("pairs_done", 0);
  if (cursor.pairs_done != pairs_done || cursor.state != state) {
    frames += sse_frame("progress", {{"state", state}, {"pairs_done", pairs_done}, {"pairs_total", status.value("pairs_total", 0)}});
    cursor.pairs_done = pairs_done;
    cursor.state = state;
  }
  if (lines_read > cursor.lines_sent) {
    const auto kept = status.value("last_lines", json::array());
    const std::size_t unseen = lines_read - cursor.lines_sent;
    if (unseen > kept.size())
      frames += sse_frame("line", {{"text", fmt::format("({} lines scrolled past)", unseen - kept.size())}});
    // kept[i] is line number lines_read - (kept.size() - i), counting from 1.
    for (std::size_t i = kept.size() - std::min(unseen, kept.size()); i < kept.size(); ++i)
      frames += sse_frame("line", {{"text", kept[i]}}, std::to_string(lines_read - kept.size() + i + 1));
    cursor.lines_sent = lines_read;
  }
  if (state != "running") {
    frames += sse_frame("end", status);
    cursor.ended = true;
  }
  return frames;
}

}  // namespace aisp::serve
