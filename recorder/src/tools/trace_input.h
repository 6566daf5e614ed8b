// What every `vtime trace` command does with its input: open the trace (reporting a coded error
// when it cannot), read record fields without trusting their types (a damaged or hand-edited
// trace must give a clear message, never an exception), and turn msg records back into typed
// protocol messages through the codec.
#pragma once

#include <vtime/recorder/trace.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "vtime/protocol/codec.h"
#include "vtime/protocol/nanos.h"

namespace vtime::recorder::tools {

// Opens a plain or zstd trace; on failure writes "vtime trace: VT00x: PATH: ..." to err.
std::unique_ptr<TraceReader> open_trace(const std::string& path, std::ostream& err);

// Writes each problem as "VTxxx line N: message" (with "PATH: " first when `with_path`).
// Returns how many there were.
size_t report_problems(const TraceReader& r, const std::string& path, std::ostream& err, bool with_path = false);

// Fields, typed or absent. A present field of the wrong type is absent.
std::optional<std::string> str_field(const Json& j, const char* key);
std::optional<int64_t> int_field(const Json& j, const char* key);
std::string str_or(const Json& j, const char* key, const std::string& fallback = "");
int64_t int_or(const Json& j, const char* key, int64_t fallback = 0);

// Simulated time in seconds with 6 decimals, as Batsim writes it.
std::string seconds6(int64_t ns);

// The exact bytes of a msg record: its "bytes", or its "hex" decoded; nullopt when neither is
// usable.
std::optional<std::string> msg_bytes(const Json& rec);

// True for the four directions of the format.
bool known_direction(const std::string& dir);
// Who wrote the message, as the codec needs it: Batsim's messages (from_batsim, to_scheduler)
// are read as addressed to the scheduler, the others as addressed to Batsim.
protocol::Direction codec_direction(const std::string& dir);

// The typed message of a msg record, or one line saying why there is none.
protocol::Result<protocol::Message> parse_msg(const Json& rec);

}  // namespace vtime::recorder::tools
