// Platform: the machines vtime sim offers to the scheduler, read from a SimGrid platform XML
// file or made up from a host count.
//
// Only the host list matters to a delay-job simulator, so the XML reader is deliberately small:
// it understands <zone>/<AS>, <host>, <cluster>/<cabinet> (prefix + radical + suffix) and <prop>,
// and skips everything else (links, routes, config). Like Batsim on SimGrid, machines are
// numbered in host-name order (SimGrid keeps hosts in a name-sorted map: host0, host1, host10,
// ...), the master host (named `master_host`, or with role "master") is not a resource, and
// hosts with role "storage" are storage resources.
//
// Example:
//     auto p = load_platform_xml("examples/platforms/cluster16.xml", "master_host");
//     if (!p) die(p.error());
//     p->compute_count();            // 16
//     auto q = make_platform(4, "master_host");   // host0..host3 + master_host
#pragma once

#include <string>
#include <vector>

#include "vtime/protocol/events.h"
#include "vtime/protocol/result.h"
#include "vtime/sim/sim_time.h"

namespace vtime::sim {

using protocol::Result;
using protocol::StringPairs;

// What one of Batsim's internal messages (one byte, SimGrid's ptask_L07 model) costs from a host
// to the master host: the route's latency, then the byte at the route's rate (its slowest link,
// or TCP-gamma / (2 x latency) when that is lower). In SimGrid's doubles, summed in its order.
struct Route {
  double latency = 0;  // s
  double rate = 0;     // bytes/s
  bool links = false;  // false: no link on the route (the message is over with its latency)
};

struct Machine {
  int id = 0;                     // Batsim resource id
  std::string name;
  std::string role;               // "" (compute) or "storage"
  StringPairs properties;         // <prop>s in file order, without "role"
  StringPairs zone_properties;    // <prop>s of the enclosing zone
  double speed = 1e9;             // flop/s of its first power state
  Route to_master;
};

struct Platform {
  std::vector<Machine> machines;  // indexed by id, name order, master excluded
  std::string master_name;
  Route master_route;             // from the master host to itself
  // What of the file the simulation ignores, one sentence each (said once by vtime sim/run).
  std::vector<std::string> ignored;

  int compute_count() const;
  bool is_compute(int id) const;
};

Result<Platform> load_platform_xml(const std::string& path, const std::string& master_name);
// Parses XML text; `origin` names it in error messages.
Result<Platform> parse_platform_xml(const std::string& text, const std::string& origin,
                                    const std::string& master_name);
// n compute hosts host0..host<n-1> plus the master host, like a no-network cluster platform.
Result<Platform> make_platform(int n, const std::string& master_name);

}  // namespace vtime::sim
