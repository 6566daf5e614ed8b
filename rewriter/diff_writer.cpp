// Myers' O(ND) line diff: the rewrites change few lines, so D is small and the trace cheap.
#include "diff_writer.h"

#include <algorithm>
#include <vector>

namespace vtime::rewriter {
namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b < s.size()) {
    size_t nl = s.find('\n', b);
    if (nl == std::string::npos) {
      out.push_back(s.substr(b) + "\n\\ No newline at end of file");
      break;
    }
    out.push_back(s.substr(b, nl - b));
    b = nl + 1;
  }
  return out;
}

enum class Op { Keep, Del, Add };
struct Step {
  Op op;
  size_t a, b;  // line indices in old / new
};

std::vector<Step> myers(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const long n = static_cast<long>(a.size()), m = static_cast<long>(b.size()), max = n + m;
  std::vector<long> v(2 * max + 2, 0);
  std::vector<std::vector<long>> trace;
  long found_d = 0;
  for (long d = 0; d <= max; ++d) {
    trace.push_back(v);
    bool done = false;
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && v[k - 1 + max] < v[k + 1 + max])) ? v[k + 1 + max] : v[k - 1 + max] + 1;
      long y = x - k;
      while (x < n && y < m && a[x] == b[y]) ++x, ++y;
      v[k + max] = x;
      if (x >= n && y >= m) {
        done = true;
        break;
      }
    }
    if (done) {
      found_d = d;
      trace.push_back(v);
      break;
    }
  }
  std::vector<Step> steps;
  long x = n, y = m;
  for (long d = found_d; d >= 0; --d) {
    const std::vector<long>& vd = trace[d];  // state before round d
    long k = x - y;
    long prev_k = (k == -d || (k != d && vd[k - 1 + max] < vd[k + 1 + max])) ? k + 1 : k - 1;
    long prev_x = d == 0 ? 0 : vd[prev_k + max];
    long prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) steps.push_back({Op::Keep, static_cast<size_t>(--x), static_cast<size_t>(--y)});
    if (d == 0) break;
    if (x == prev_x) steps.push_back({Op::Add, static_cast<size_t>(x), static_cast<size_t>(--y)});
    else steps.push_back({Op::Del, static_cast<size_t>(--x), static_cast<size_t>(y)});
  }
  std::reverse(steps.begin(), steps.end());
  return steps;
}

}  // namespace

std::string unified_diff(const std::string& old_name, const std::string& new_name, const std::string& before,
                         const std::string& after) {
  if (before == after) return {};
  const auto a = lines_of(before), b = lines_of(after);
  const std::vector<Step> steps = myers(a, b);
  constexpr size_t kContext = 3;
  std::string out = "--- " + old_name + "\n+++ " + new_name + "\n";
  size_t i = 0;
  while (i < steps.size()) {
    if (steps[i].op == Op::Keep) {
      ++i;
      continue;
    }
    // A hunk: from kContext kept lines before the change to kContext after the last change
    // that is not separated from the next by more than 2*kContext kept lines.
    size_t start = i >= kContext ? i - kContext : 0;
    size_t end = i;
    while (end < steps.size()) {
      if (steps[end].op != Op::Keep) {
        ++end;
        continue;
      }
      size_t run = end;
      while (run < steps.size() && steps[run].op == Op::Keep) ++run;
      if (run == steps.size() || run - end > 2 * kContext) {
        end = std::min(run, end + kContext);
        break;
      }
      end = run;
    }
    size_t old_start = steps[start].a, new_start = steps[start].b, old_len = 0, new_len = 0;
    std::string body;
    for (size_t s = start; s < end; ++s) {
      const Step& st = steps[s];
      if (st.op == Op::Keep) body += " " + a[st.a] + "\n", ++old_len, ++new_len;
      else if (st.op == Op::Del) body += "-" + a[st.a] + "\n", ++old_len;
      else body += "+" + b[st.b] + "\n", ++new_len;
    }
    auto range = [](size_t s, size_t len) {
      return std::to_string(len == 0 ? s : s + 1) + (len == 1 ? "" : "," + std::to_string(len));
    };
    out += "@@ -" + range(old_start, old_len) + " +" + range(new_start, new_len) + " @@\n" + body;
    i = end;
  }
  return out;
}

}  // namespace vtime::rewriter
