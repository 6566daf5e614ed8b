// A bridge's command-line option that is a span of virtual time, as the user writes it: a number
// with a unit (ns, us, ms, s), kept in nanoseconds.
//
// Example:
//     long long ns = 17'000'000;
//     bridges::add_duration_option(app, "--job-start-latency", ns, "What a job's launch takes", "17ms");
#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <string>

namespace vtime::bridges {

// Adds the option (from 0 to `max_ns`), written into `ns` as a whole number of nanoseconds, and
// returns it for more checks; `shown` is the default as --help prints it.
inline CLI::Option* add_duration_option(CLI::App& app, const std::string& name, long long& ns, const std::string& help,
                                        const std::string& shown, double max_ns = 1e12) {
  return app.add_option_function<double>(name, [&ns](const double& v) { ns = static_cast<long long>(v); },
                                         help + " (ns, us, ms, s)")
      ->transform(CLI::AsNumberWithUnit(std::map<std::string, double>{{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}},
                                        CLI::AsNumberWithUnit::CASE_SENSITIVE))
      ->check(CLI::Range(0.0, max_ns))
      ->default_str(shown);
}

}  // namespace vtime::bridges
