#include "job_order.h"

#include <algorithm>

namespace vtime::bridges {
namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Numeric order of two digit strings of any length: fewer significant digits first.
bool number_less(std::string_view a, std::string_view b) {
  a.remove_prefix(std::min(a.find_first_not_of('0'), a.size()));
  b.remove_prefix(std::min(b.find_first_not_of('0'), b.size()));
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

}  // namespace

bool natural_id_less(std::string_view a, std::string_view b) {
  size_t ia = a.find('!');
  size_t ib = b.find('!');
  std::string_view wa = ia == std::string_view::npos ? std::string_view{} : a.substr(0, ia);
  std::string_view wb = ib == std::string_view::npos ? std::string_view{} : b.substr(0, ib);
  if (wa != wb) return wa < wb;
  std::string_view ja = ia == std::string_view::npos ? a : a.substr(ia + 1);
  std::string_view jb = ib == std::string_view::npos ? b : b.substr(ib + 1);
  if (all_digits(ja) && all_digits(jb)) {
    if (number_less(ja, jb)) return true;
    if (number_less(jb, ja)) return false;
  }
  return ja < jb;  // also orders "007" and "7" consistently
}

}  // namespace vtime::bridges
