#include <vtime/sweep/plots.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

namespace vtime::sweep {
namespace {

struct Point {
  double x, y, err;
};
struct Curve {
  std::string title;
  std::vector<Point> points;
};

std::string gp_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string file_safe(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return out;
}

std::string unit_of(const Param& p) {
  if (p.kind.type == ParamKind::kDuration) {
    if (p.kind.unit_seconds == 1e-3) return "ms";
    if (p.kind.unit_seconds == 1e-6) return "us";
    if (p.kind.unit_seconds == 1e-9) return "ns";
    return "s";
  }
  if (p.kind.type == ParamKind::kPlaceholder && !p.values.values.empty()) {
    // Written back as given: the unit is the text after the number.
    const auto& t = p.values.values.front().text;
    size_t i = t.find_first_not_of("0123456789.+-eE");
    return i == std::string::npos ? std::string() : t.substr(i);
  }
  return {};
}

bool numeric(const Param& p) {
  return !p.values.values.empty() &&
         std::all_of(p.values.values.begin(), p.values.values.end(), [](const SweepValue& v) { return v.number.has_value(); });
}

// The value of metric k for a configuration (k == metrics().size(): the failure rate).
std::optional<Point> point_of(const ConfigurationSummary& s, size_t k, double x) {
  if (k == metrics().size()) {
    if (!s.finished) return std::nullopt;
    return Point{x, static_cast<double>(s.finished - s.ok) / static_cast<double>(s.finished), 0};
  }
  const Stats& st = s.stats[k];
  if (st.n == 0) return std::nullopt;
  return Point{x, st.mean, st.ci95};
}

std::string series_title(const Plan& plan, const Configuration& c, size_t skip) {
  std::string t;
  for (size_t i = 0; i < plan.params.size(); ++i) {
    if (i == skip || c.values[i] == kUnused) continue;
    if (!t.empty()) t += ", ";
    const Param& p = plan.params[i];
    t += p.name + "=" + p.values.values[static_cast<size_t>(c.values[i])].text +
         (p.kind.type == ParamKind::kDuration ? unit_of(p) : "");
  }
  return t;
}

int run_gnuplot(const std::string& gnuplot, const std::string& dir, const std::vector<std::string>& scripts,
                std::string* error) {
  std::vector<std::string> argv = {gnuplot};
  argv.insert(argv.end(), scripts.begin(), scripts.end());
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  std::string log = dir + "/gnuplot.log";
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null = open("/dev/null", O_RDONLY);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    if (null >= 0) dup2(null, 0);
    execvp(args[0], args.data());
    _exit(127);
  }
  if (pid < 0) {
    *error = std::string("cannot start gnuplot: ") + std::strerror(errno);
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    *error = "gnuplot not found ('" + gnuplot + "'): the figures' data and scripts are in " + dir +
             " (install gnuplot-nox and run `gnuplot *.gp` there)";
    return -1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *error = "gnuplot failed: see " + log;
    return -1;
  }
  return 0;
}

}  // namespace

PlotsWritten write_plots(const Plan& plan, const Report& report, const std::string& dir, const std::string& gnuplot) {
  PlotsWritten out;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    out.error = "cannot create " + dir + ": " + ec.message();
    return out;
  }
  std::vector<std::string> scripts;
  for (size_t w = 0; w < plan.workloads.size(); ++w) {
    // Plot the timeout-policy configurations; a sweep with none (only exact runs) plots those.
    std::vector<size_t> configs, references;
    for (size_t i = 0; i < plan.configurations.size(); ++i) {
      if (plan.configurations[i].workload != w) continue;
      (plan.configurations[i].reference ? references : configs).push_back(i);
    }
    // A sweep of exact runs only (--sync exact): its curves are the references themselves.
    const bool only_references = configs.empty();
    if (only_references) configs = references;
    for (size_t p = 0; p < plan.params.size(); ++p) {
      const Param& param = plan.params[p];
      if (!numeric(param)) continue;
      for (size_t k = 0; k <= metrics().size(); ++k) {
        const bool failure_rate = k == metrics().size();
        const std::string metric = failure_rate ? "failure_rate" : metrics()[k].name;
        const std::string label = failure_rate ? "failed runs (fraction)" : metrics()[k].label;
        // One curve per combination of the other parameters; its exact reference at each x.
        std::map<std::string, Curve> curves, refs;
        std::vector<std::string> order;
        for (size_t ci : configs) {
          const Configuration& c = plan.configurations[ci];
          if (c.values[p] == kUnused) continue;
          double x = *param.values.values[static_cast<size_t>(c.values[p])].number;
          std::string title = series_title(plan, c, p);
          if (!curves.count(title)) order.push_back(title);
          Curve& cv = curves[title];
          cv.title = title;
          if (auto pt = point_of(report.configurations[ci], k, x)) cv.points.push_back(*pt);
          // The reference's own configuration row holds its values.
          for (size_t ri : only_references ? std::vector<size_t>{} : references) {
            const Configuration& r = plan.configurations[ri];
            if (r.reference_run != c.reference_run) continue;
            if (auto pt = point_of(report.configurations[ri], k, x)) refs[title].points.push_back(*pt);
          }
        }
        // Identical reference curves (a sync-policy parameter on x) are drawn once.
        std::vector<Curve> ref_curves;
        for (const auto& t : order) {
          Curve r = refs[t];
          auto same = [&](const Curve& o) {
            return o.points.size() == r.points.size() &&
                   std::equal(o.points.begin(), o.points.end(), r.points.begin(),
                              [](const Point& a, const Point& b) { return a.x == b.x && a.y == b.y; });
          };
          if (r.points.empty() || std::any_of(ref_curves.begin(), ref_curves.end(), same)) continue;
          r.title = t;
          ref_curves.push_back(r);
        }
        bool any = false;
        for (auto& [t, c] : curves) any = any || !c.points.empty();
        if (!any && ref_curves.empty()) continue;
        for (auto& [t, c] : curves)
          std::sort(c.points.begin(), c.points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
        for (auto& c : ref_curves)
          std::sort(c.points.begin(), c.points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });

        const std::string base = file_safe(plan.workloads[w].name) + "_" + metric + "-vs-" + file_safe(param.name);
        std::ofstream dat(dir + "/" + base + ".dat", std::ios::trunc);
        std::string plot;
        size_t block = 0;
        auto emit = [&](const Curve& c) {
          dat << "# " << c.title << "\n";
          for (const Point& pt : c.points) dat << format_number(pt.x) << " " << format_number(pt.y) << " " << format_number(pt.err) << "\n";
          dat << "\n\n";
          return block++;
        };
        for (const auto& t : order) {
          const Curve& c = curves[t];
          if (c.points.empty()) continue;
          size_t b = emit(c);
          if (!plot.empty()) plot += ", \\\n     ";
          plot += "'" + base + ".dat' index " + std::to_string(b) + " using 1:2:3 with yerrorlines pt 7 ps 0.6 title " +
                  gp_string(c.title.empty() ? (only_references ? "exact" : "timeout policy") : c.title);
        }
        for (const Curve& r : ref_curves) {
          size_t b = emit(r);
          if (!plot.empty()) plot += ", \\\n     ";
          std::string title = ref_curves.size() == 1 ? "exact reference" : "exact reference (" + r.title + ")";
          // A single x (one value swept) draws the reference as a point; otherwise a line.
          plot += "'" + base + ".dat' index " + std::to_string(b) + " using 1:2 with " +
                  std::string(r.points.size() == 1 ? "points pt 6 ps 1.5" : "lines dt 2 lw 2") + " lc rgb 'black' title " +
                  gp_string(title);
        }
        dat.close();
        std::string unit = unit_of(param);
        bool logx = param.values.log_scale;
        std::ofstream gp(dir + "/" + base + ".gp", std::ios::trunc);
        gp << "# " << label << " against " << param.name << " on " << plan.workloads[w].name
           << " (vtime sweep). Render with: gnuplot " << base << ".gp\n"
           << "reset\n"
           << "set title " << gp_string(label + " against " + param.name + " - " + plan.workloads[w].name) << " noenhanced\n"
           << "set xlabel " << gp_string(param.name + (unit.empty() ? "" : " (" + unit + ")")) << " noenhanced\n"
           << "set ylabel " << gp_string(label) << " noenhanced\n"
           << "set key outside top center horizontal noenhanced\n"
           << "set grid\n"
           << "set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05\n"
           << (logx ? "set logscale x\n" : "")
           << "set terminal pngcairo size 800,520 noenhanced\n"
           << "set output '" << base << ".png'\n"
           << "plot " << plot << "\n"
           << "set terminal svg size 800,520 noenhanced\n"
           << "set output '" << base << ".svg'\n"
           << "replot\n"
           << "unset output\n";
        scripts.push_back(base + ".gp");
        out.figures.push_back(dir + "/" + base + ".png");
      }
    }
  }
  if (!scripts.empty()) run_gnuplot(gnuplot, dir, scripts, &out.error);
  return out;
}

}  // namespace vtime::sweep
