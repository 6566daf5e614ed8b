// Mean, sample standard deviation and the half-width of a 95% confidence interval of the mean
// (Student's t, so 2 or 3 repetitions get honest, wide intervals).
//
// Example:
//     Stats s = describe({10.0, 12.0, 11.0});  // s.n == 3, s.mean == 11, s.ci95 ~ 2.48
#pragma once

#include <cstddef>
#include <vector>

namespace vtime::sweep {

struct Stats {
  size_t n = 0;
  double mean = 0;
  double sd = 0;    // 0 when n < 2
  double ci95 = 0;  // 0 when n < 2
};

Stats describe(const std::vector<double>& xs);

// The 97.5% quantile of Student's t with `df` degrees of freedom (df >= 1).
double student_t975(size_t df);

}  // namespace vtime::sweep
