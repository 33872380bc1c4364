// Words for /bin/sh: commands the harness runs (cuobjdump, `bench run` per size) and the command
// line results record.
#pragma once

#include <string>
#include <string_view>

namespace aisp {

// `text` as one /bin/sh word, whatever quotes it holds: single-quoted, each ' as '\''.
[[nodiscard]] std::string shell_quoted(std::string_view text);
// The same, but a word of only [A-Za-z0-9_./:=+,@%-] stays as it is (readable command lines).
[[nodiscard]] std::string shell_word(std::string_view text);

}  // namespace aisp
