// The little CSV the sweep reads (the simulator's outputs) and writes (runs.csv, summary.csv):
// RFC 4180 quoting, one record per line (no embedded newlines in what vtime writes).
//
// Example:
//     auto rows = read_csv_file("out_jobs.csv");   // rows->front() is the header
//     std::string line = csv_line({"a", "b,c"});  // a,"b,c"
#pragma once

#include <vtime/protocol/result.h>

#include <string>
#include <string_view>
#include <vector>

namespace vtime::sweep {

using Row = std::vector<std::string>;

// The fields of one line; false on an unterminated quote.
bool split_csv_line(std::string_view line, Row& out);
// Every line of a file (blank lines skipped); an error names the file and line number.
protocol::Result<std::vector<Row>> read_csv_file(const std::string& path);
// One line, quoted where needed, ending in '\n'.
std::string csv_line(const Row& fields);

}  // namespace vtime::sweep
