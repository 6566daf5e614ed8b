#include <vtime/sweep/csv.h>

#include <fstream>

namespace vtime::sweep {

bool split_csv_line(std::string_view line, Row& out) {
  out.clear();
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(field));
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  out.push_back(std::move(field));
  return !quoted;
}

protocol::Result<std::vector<Row>> read_csv_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return protocol::Error{"cannot read '" + path + "'"};
  std::vector<Row> rows;
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line == "\r") continue;
    Row r;
    if (!split_csv_line(line, r)) return protocol::Error{path + ":" + std::to_string(n) + ": unterminated quote"};
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string csv_line(const Row& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    const std::string& f = fields[i];
    if (f.find_first_of(",\"\n") == std::string::npos) {
      out += f;
      continue;
    }
    out += '"';
    for (char c : f) {
      if (c == '"') out += '"';
      out += c;
    }
    out += '"';
  }
  out += '\n';
  return out;
}

}  // namespace vtime::sweep
