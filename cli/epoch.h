// Parsing --epoch: an ISO-8601 instant (or @SECONDS) into nanoseconds since the Unix epoch.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace vtime::cli {

// Accepts 2024-05-01, 2024-05-01T12:00, 2024-05-01T12:00:00, with optional fraction (.123),
// and a zone Z, +hh:mm, +hhmm or -hh (none means UTC); a space may replace the T; and
// @SECONDS[.fraction]. Returns nullopt for anything else.
std::optional<int64_t> parse_epoch(std::string_view text);

}  // namespace vtime::cli
