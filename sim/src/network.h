// Internal to vtime_sim: the network part of a SimGrid platform file, enough to compute what
// one of Batsim's internal messages costs between two hosts with SimGrid 3.32's routing and its
// ptask_L07 model (network.cpp says how each construct is routed).
//
// Built by the platform reader as it meets the tags, in file order; route() answers once the
// file is read.
#pragma once

#include <array>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "vtime/sim/platform.h"

namespace vtime::sim::detail {

struct NetLink {
  std::string name;
  double bandwidth = 0;  // bytes/s
  double latency = 0;    // s
  bool fatpipe = false;
};

class Network {
 public:
  Network();
  // The tags, in file order. Each returns an error message, or "" when accepted.
  std::string open_zone(const std::string& id, const std::string& routing);
  void close_zone();
  std::string add_host(const std::string& name, const std::string& coordinates);
  std::string add_router(const std::string& name, const std::string& coordinates);
  // <link>: SPLITDUPLEX makes NAME_UP and NAME_DOWN.
  std::string add_link(const std::string& name, double bw, double lat, const std::string& policy);
  // <cluster> (flat): its hosts, private links, backbone, router, as SimGrid builds them.
  struct Cluster {
    std::string id, prefix, suffix;
    std::vector<long> radicals;
    double bw = 0, lat = 0, bb_bw = 0, bb_lat = 0, loopback_bw = 0, loopback_lat = 0, limiter = 0;
    std::string policy = "SPLITDUPLEX", bb_policy = "SHARED", router_id;
    bool has_links = true;  // false: no private links (a file without bw)
  };
  std::string add_cluster(const Cluster& c);
  // <cabinet> inside a Cluster zone: hosts with private links NAME_UP/NAME_DOWN.
  std::string add_cabinet(const std::string& prefix, const std::string& suffix, const std::vector<long>& radicals,
                          double bw, double lat);
  std::string add_backbone(const std::string& name, double bw, double lat);
  std::string add_host_link(const std::string& host, const std::string& up, const std::string& down);
  // <route>/<zoneRoute>: links as (name, direction "NONE"/"UP"/"DOWN").
  std::string add_route(const std::string& src, const std::string& dst, const std::string& gw_src,
                        const std::string& gw_dst, const std::vector<std::pair<std::string, std::string>>& links,
                        bool symmetrical);
  void set_config(const std::string& key, double value);

  // The message cost from host `src` to host `dst` (by name); an error when SimGrid would fail.
  Result<Route> route(const std::string& src, const std::string& dst) const;

 private:
  struct Zone;
  struct Point {          // SimGrid's NetPoint: a host, a router, or a zone seen from its parent
    std::string name;
    int zone = -1;        // englobing zone
    int id = -1;          // vertex number in that zone
    int is_zone = -1;     // the zone it stands for
    std::optional<std::array<double, 3>> coords;
  };
  struct Hop {
    int gw_src = -1, gw_dst = -1;
    std::vector<int> links;
  };
  struct Zone {
    std::string id;
    std::string routing;  // Full, Cluster (star), Vivaldi, None
    int parent = -1;
    bool recursive = false;
    std::vector<int> vertices;                 // points
    std::map<std::pair<int, int>, Hop> routes; // Full: by vertex ids
    // Star: per vertex id
    std::map<int, std::vector<int>> up, down, loopback;
    std::map<int, int> gateway;
    int backbone = -1;                         // <zone routing="Cluster"><backbone>
    std::map<int, std::pair<int, int>> host_links;  // <host_link>s and cabinets: vertex -> (up, down)
    // Floyd: the predecessor of b on the shortest path from a (by link count), after sealing.
    std::vector<std::vector<int>> pred;
  };
  void seal_floyd(Zone& z);

  int point(const std::string& name) const;
  int add_point(const std::string& name, int is_zone);
  int link(const std::string& name) const;
  std::string resolve(const std::vector<std::pair<std::string, std::string>>& links, bool back, std::vector<int>& out) const;
  void add_link_latency(std::vector<int>& links, double& lat, int l) const;
  std::string local_route(const Zone& z, int src, int dst, std::vector<int>& links, double& lat, int& gw_src,
                          int& gw_dst) const;
  std::string global_route(int src, int dst, std::vector<int>& links, double& lat, int depth) const;

  std::vector<NetLink> links_;
  std::map<std::string, int> link_index_;
  std::vector<Point> points_;
  std::map<std::string, int> point_index_;
  std::vector<Zone> zones_;
  std::map<int, int> zone_points_;             // zone -> its point in its parent
  std::set<std::string> split_;                // split-duplex links, by base name
  std::vector<int> open_;                      // zones being read
  int loopback_ = -1;                          // SimGrid's __loopback__ of Full zones
  double tcp_gamma_ = 4194304.0L;
};

// Units of SimGrid's attributes (xbt_parse_units.cpp): nullopt when the text is not one.
std::optional<double> parse_bandwidth(const std::string& text);
std::optional<double> parse_time(const std::string& text);
std::optional<double> parse_speed(const std::string& text);

}  // namespace vtime::sim::detail
