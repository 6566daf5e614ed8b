// The sweep's figures, in the style of the Batkube thesis' (figures 4.2-4.6): every metric (and the
// failure rate) against every numeric swept parameter, one figure per workload, one curve per
// combination of the other parameters, the mean with its 95% confidence interval as error bars,
// and the exact reference drawn as a dashed black line. Log x axis for log ranges. Written as
// data + gnuplot script (kept, to restyle) and rendered to PNG and SVG by gnuplot.
//
// Example:
//     PlotsWritten p = write_plots(plan, report, "sweep/plots");
//     if (!p.error.empty()) fprintf(stderr, "%s\n", p.error.c_str());
#pragma once

#include <vtime/sweep/plan.h>
#include <vtime/sweep/report.h>

#include <string>
#include <vector>

namespace vtime::sweep {

struct PlotsWritten {
  std::vector<std::string> figures;  // the .png paths (each with its .svg, .gp, .dat)
  std::string error;                 // why gnuplot could not render them, if it could not
};

// Writes the figures under `plots_dir` (created); `gnuplot` is the program to render them.
PlotsWritten write_plots(const Plan& plan, const Report& report, const std::string& plots_dir,
                         const std::string& gnuplot = "gnuplot");

}  // namespace vtime::sweep
