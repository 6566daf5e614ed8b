#include <vtime/sweep/statistics.h>

#include <cmath>

namespace vtime::sweep {

double student_t975(size_t df) {
  static constexpr double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df == 0) return 0;
  if (df <= 30) return kTable[df - 1];
  // Beyond the table: 1.96 + 2.4/df matches 40, 60 and 120 degrees of freedom to 0.003.
  return 1.96 + 2.4 / static_cast<double>(df);
}

Stats describe(const std::vector<double>& xs) {
  Stats s;
  s.n = xs.size();
  if (s.n == 0) return s;
  double sum = 0;
  for (double x : xs) sum += x;
  s.mean = sum / static_cast<double>(s.n);
  if (s.n < 2) return s;
  double sq = 0;
  for (double x : xs) sq += (x - s.mean) * (x - s.mean);
  s.sd = std::sqrt(sq / static_cast<double>(s.n - 1));
  s.ci95 = student_t975(s.n - 1) * s.sd / std::sqrt(static_cast<double>(s.n));
  return s;
}

}  // namespace vtime::sweep
