#include "harness/variant_notes.hpp"

#include <algorithm>

#include "aisp/check.hpp"
#include "aisp/run_context.hpp"

namespace aisp {

void variant_notes::add(std::string_view key, std::string_view value) {
  const std::string shown(key.substr(0, max_note_key_chars));
  AISP_EXPECTS(!key.empty() && key.size() <= max_note_key_chars &&
                   std::all_of(key.begin(), key.end(),
                               [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }),
               "note key '" + shown + "' must be 1 to " + std::to_string(max_note_key_chars) + " characters of [a-z0-9_]");
  AISP_EXPECTS(value.size() <= max_note_value_chars,
               "note '" + shown + "' has " + std::to_string(value.size()) + " characters, over the " +
                   std::to_string(max_note_value_chars) + " a note may hold");
  // Printable ASCII only: the JSON writer throws on invalid UTF-8, and a note is read in terminals.
  AISP_EXPECTS(std::all_of(value.begin(), value.end(), [](char c) { return c >= ' ' && c <= '~'; }),
               "note '" + shown + "' holds a character outside printable ASCII");
  AISP_EXPECTS(notes_.size() < max_notes || notes_.contains(shown),
               "note '" + shown + "' would be note " + std::to_string(max_notes + 1) + "; a variant may keep " +
                   std::to_string(max_notes));
  notes_[shown] = std::string(value);
}

}  // namespace aisp
