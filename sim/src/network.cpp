// SimGrid 3.32's routing, for the cost of Batsim's one-byte messages (SimGrid sources:
// kernel/routing/{NetZoneImpl,FullZone,StarZone,VivaldiZone}.cpp, surf/sg_platf.cpp,
// surf/ptask_L07.cpp). What is kept of each route is its links and its latency: a lone one-byte
// transfer takes the latency, then 1 / min(slowest link's bandwidth / its weight,
// TCP-gamma / (2 x latency)) (no latency or bandwidth factor in ptask_L07).
#include "network.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <strings.h>

namespace vtime::sim::detail {

namespace {

std::optional<double> with_units(const std::string& text, const std::map<std::string, double>& units,
                                      double bare) {
  const char* s = text.c_str();
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end == s || !std::isfinite(v)) return std::nullopt;
  std::string suffix(end);
  if (suffix.empty()) return v * bare;
  auto it = units.find(suffix);
  if (it == units.end()) return std::nullopt;
  return v * it->second;
}

std::map<std::string, double> prefixed(const std::map<std::string, double>& bases, bool binary) {
  std::map<std::string, double> out = bases;
  const char* dec[] = {"k", "M", "G", "T", "P", "E", "Z", "Y"};
  const char* bin[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"};
  // xbt_parse_units.cpp: each prefix multiplies the previous one's factor (in double).
  for (const auto& [base, mult] : bases) {
    double m = mult, b = mult;
    for (int i = 0; i < 8; ++i) {
      m *= 1000;
      out[dec[i] + base] = m;
      if (binary) {
        b *= 1024;
        out[bin[i] + base] = b;
      }
    }
  }
  return out;
}

}  // namespace

std::optional<double> parse_bandwidth(const std::string& text) {
  static const auto units = prefixed({{"Bps", 1.0}, {"bps", 0.125}}, true);
  return with_units(text, units, 1.0);
}

std::optional<double> parse_time(const std::string& text) {
  static const std::map<std::string, double> units = {{"w", 604800}, {"d", 86400}, {"h", 3600}, {"m", 60},
                                                           {"s", 1},      {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9},
                                                           {"ps", 1e-12}};
  return with_units(text, units, 1.0);
}

std::optional<double> parse_speed(const std::string& text) {
  static const auto units = [] {
    auto u = prefixed({{"f", 1.0}}, false);
    const char* longs[] = {"kilo", "mega", "giga", "tera", "peta", "exa", "zetta", "yotta"};
    double m = 1;
    u["flops"] = 1;
    for (const char* p : longs) {
      m *= 1000;
      u[std::string(p) + "flops"] = m;
    }
    return u;
  }();
  // A list of power states: the first is the speed.
  return with_units(text.substr(0, text.find(',')), units, 1.0);
}

Network::Network() {
  links_.push_back(NetLink{"__loopback__", 10e9, 0, true});
  link_index_["__loopback__"] = 0;
  loopback_ = 0;
}

void Network::set_config(const std::string& key, double value) {
  if (key == "network/TCP-gamma" || key == "network/TCP_gamma") tcp_gamma_ = value;
  else if (key == "network/loopback-bw") links_[static_cast<size_t>(loopback_)].bandwidth = value;
  else if (key == "network/loopback-lat") links_[static_cast<size_t>(loopback_)].latency = value;
}

int Network::point(const std::string& name) const {
  auto it = point_index_.find(name);
  return it == point_index_.end() ? -1 : it->second;
}

int Network::link(const std::string& name) const {
  auto it = link_index_.find(name);
  return it == link_index_.end() ? -1 : it->second;
}

int Network::add_point(const std::string& name, int is_zone) {
  Point p;
  p.name = name;
  p.is_zone = is_zone;
  if (!open_.empty()) {
    Zone& z = zones_[static_cast<size_t>(open_.back())];
    p.zone = open_.back();
    p.id = static_cast<int>(z.vertices.size());
    z.vertices.push_back(static_cast<int>(points_.size()));
  }
  points_.push_back(p);
  if (is_zone < 0) point_index_[name] = static_cast<int>(points_.size()) - 1;
  return static_cast<int>(points_.size()) - 1;
}

std::string Network::open_zone(const std::string& id, const std::string& routing) {
  static const char* known[] = {"Full", "Floyd", "None", "Cluster", "Vivaldi"};
  std::string r;
  for (const char* k : known)
    if (strcasecmp(routing.c_str(), k) == 0) r = k;
  if (r.empty()) {
    for (const char* k : {"Dijkstra", "DijkstraCache", "Wifi"})
      if (strcasecmp(routing.c_str(), k) == 0)
        return "zone '" + id + "' uses routing '" + routing +
               "', which vtime sim does not model (Full, Floyd, Cluster, Vivaldi and None are); use --batsim with "
               "real Batsim";
    return "zone '" + id + "' has an unknown routing '" + routing + "' (SimGrid accepts Full, Floyd, Dijkstra, "
           "DijkstraCache, None, Vivaldi, Cluster, Wifi)";
  }
  Zone z;
  z.id = id;
  z.routing = r;
  z.parent = open_.empty() ? -1 : open_.back();
  int index = static_cast<int>(zones_.size());
  if (z.parent >= 0) {
    zones_[static_cast<size_t>(z.parent)].recursive = true;
    zones_.push_back(z);
    int p = add_point(id, index);
    zone_points_[index] = p;
  } else {
    zones_.push_back(z);
  }
  open_.push_back(index);
  return {};
}

void Network::close_zone() {
  if (open_.empty()) return;
  Zone& z = zones_[static_cast<size_t>(open_.back())];
  if (z.routing == "Floyd") seal_floyd(z);
  // <zone routing="Cluster">: host links, with the backbone when there is one.
  for (const auto& [v, ud] : z.host_links) {
    std::vector<int> up{ud.first}, down{ud.second};
    if (z.backbone >= 0) {
      up.push_back(z.backbone);
      down.insert(down.begin(), z.backbone);
    }
    z.up[v] = up;
    z.down[v] = down;
  }
  open_.pop_back();
}

std::string Network::add_host(const std::string& name, const std::string& coordinates) {
  if (open_.empty()) return "host '" + name + "' is outside any zone";
  int p = add_point(name, -1);
  if (!coordinates.empty()) {
    std::istringstream in(coordinates);
    std::array<double, 3> c{};
    if (!(in >> c[0] >> c[1] >> c[2])) return "host '" + name + "': coordinates must be three numbers ('x y z')";
    points_[static_cast<size_t>(p)].coords = c;
  }
  return {};
}

std::string Network::add_router(const std::string& name, const std::string& coordinates) { return add_host(name, coordinates); }

std::string Network::add_link(const std::string& name, double bw, double lat, const std::string& policy) {
  auto one = [&](const std::string& n, bool fatpipe) -> std::string {
    if (link_index_.count(n)) return "link '" + n + "' is defined twice";
    link_index_[n] = static_cast<int>(links_.size());
    links_.push_back(NetLink{n, bw, lat, fatpipe});
    return {};
  };
  if (policy == "SPLITDUPLEX" || policy == "FULLDUPLEX") {
    std::string e = one(name + "_UP", false);
    if (e.empty()) e = one(name + "_DOWN", false);
    if (e.empty()) split_.insert(name);
    return e;
  }
  if (policy == "FATPIPE") return one(name, true);
  if (policy == "SHARED" || policy.empty()) return one(name, false);
  if (policy == "WIFI") return "link '" + name + "' is a WIFI link, which ptask_L07 (Batsim's model) does not support";
  return "link '" + name + "' has an unknown sharing_policy '" + policy + "'";
}

std::string Network::add_cluster(const Cluster& c) {
  if (std::string e = open_zone(c.id, "Cluster"); !e.empty()) return e;
  Zone& z = zones_[static_cast<size_t>(open_.back())];
  int bb = -1;
  if (c.bb_bw > 0 || c.bb_lat > 0) {
    if (std::string e = add_link(c.id + "_backbone", c.bb_bw, c.bb_lat, c.bb_policy == "FATPIPE" ? "FATPIPE" : "SHARED");
        !e.empty())
      return e;
    bb = link(c.id + "_backbone");
  }
  for (long r : c.radicals) {
    std::string host = c.prefix + std::to_string(r) + c.suffix;
    if (point(host) >= 0) return "host '" + host + "' is defined twice";
    int p = add_point(host, -1);
    int v = points_[static_cast<size_t>(p)].id;
    std::string lid = c.id + "_link_" + std::to_string(r);
    if (c.loopback_bw > 0 || c.loopback_lat > 0) {
      if (std::string e = add_link(lid + "_loopback", c.loopback_bw, c.loopback_lat, "FATPIPE"); !e.empty()) return e;
      z.loopback[v] = {link(lid + "_loopback")};
    }
    int limiter = -1;
    if (c.limiter > 0) {
      if (std::string e = add_link(lid + "_limiter", c.limiter, 0, "SHARED"); !e.empty()) return e;
      limiter = link(lid + "_limiter");
    }
    if (!c.has_links) continue;
    // SimGrid creates the private links SHARED even when the cluster says FATPIPE.
    bool split = c.policy == "SPLITDUPLEX" || c.policy == "FULLDUPLEX";
    if (std::string e = add_link(lid, c.bw, c.lat, split ? "SPLITDUPLEX" : "SHARED"); !e.empty()) return e;
    int upl = split ? link(lid + "_UP") : link(lid), downl = split ? link(lid + "_DOWN") : link(lid);
    std::vector<int> up, down;
    if (limiter >= 0) up.push_back(limiter);
    up.push_back(upl);
    if (bb >= 0) up.push_back(bb);
    if (bb >= 0) down.push_back(bb);
    down.push_back(downl);
    if (limiter >= 0) down.push_back(limiter);
    z.up[v] = up;
    z.down[v] = down;
  }
  add_point(c.router_id.empty() ? c.prefix + c.id + "_router" + c.suffix : c.router_id, -1);
  close_zone();
  return {};
}

std::string Network::add_cabinet(const std::string& prefix, const std::string& suffix, const std::vector<long>& radicals,
                                 double bw, double lat) {
  if (open_.empty() || zones_[static_cast<size_t>(open_.back())].routing != "Cluster")
    return "<cabinet> must be inside a zone with routing 'Cluster'";
  for (long r : radicals) {
    std::string host = prefix + std::to_string(r) + suffix;
    if (point(host) >= 0) return "host '" + host + "' is defined twice";
    int p = add_point(host, -1);
    for (const char* d : {"_UP", "_DOWN"})
      if (std::string e = add_link("link_" + host + d, bw, lat, "SHARED"); !e.empty()) return e;
    zones_[static_cast<size_t>(open_.back())].host_links[points_[static_cast<size_t>(p)].id] = {
        link("link_" + host + "_UP"), link("link_" + host + "_DOWN")};
  }
  return {};
}

std::string Network::add_backbone(const std::string& name, double bw, double lat) {
  if (open_.empty() || zones_[static_cast<size_t>(open_.back())].routing != "Cluster")
    return "<backbone> must be inside a zone with routing 'Cluster'";
  if (std::string e = add_link(name, bw, lat, "SHARED"); !e.empty()) return e;
  zones_[static_cast<size_t>(open_.back())].backbone = link(name);
  return {};
}

std::string Network::add_host_link(const std::string& host, const std::string& up, const std::string& down) {
  if (open_.empty()) return "<host_link> outside a zone";
  Zone& z = zones_[static_cast<size_t>(open_.back())];
  if (z.routing != "Cluster") return {};  // SimGrid ignores it elsewhere
  int p = point(host);
  if (p < 0 || points_[static_cast<size_t>(p)].zone != open_.back())
    return "<host_link> names host '" + host + "', which is not in zone '" + z.id + "'";
  int u = link(up), d = link(down);
  if (u < 0 || d < 0) return "<host_link> for '" + host + "' names an unknown link ('" + (u < 0 ? up : down) + "')";
  z.host_links[points_[static_cast<size_t>(p)].id] = {u, d};
  return {};
}

std::string Network::resolve(const std::vector<std::pair<std::string, std::string>>& links, bool back,
                             std::vector<int>& out) const {
  for (const auto& [name, dir] : links) {
    if (dir == "NONE" || dir.empty()) {
      if (split_.count(name))
        return "link '" + name + "' is split-duplex: name one direction (direction=\"UP\" or \"DOWN\")";
      int l = link(name);
      if (l < 0) return "unknown link '" + name + "'";
      out.push_back(l);
    } else if (dir == "UP" || dir == "DOWN") {
      if (!split_.count(name)) return "link '" + name + "' is not split-duplex but is used with direction " + dir;
      bool up = (dir == "UP") != back;
      out.push_back(link(name + (up ? "_UP" : "_DOWN")));
    } else {
      return "link_ctn '" + name + "' has an unknown direction '" + dir + "'";
    }
  }
  return {};
}

std::string Network::add_route(const std::string& src, const std::string& dst, const std::string& gw_src,
                               const std::string& gw_dst, const std::vector<std::pair<std::string, std::string>>& links,
                               bool symmetrical) {
  if (open_.empty()) return "route outside a zone";
  int zi = open_.back();
  Zone& z = zones_[static_cast<size_t>(zi)];
  if (z.routing != "Full" && z.routing != "Floyd")
    return "routes in a zone with routing '" + z.routing + "' are not modelled by vtime sim (zone '" + z.id +
           "'); use --batsim with real Batsim";
  if (links.empty()) return "route from '" + src + "' to '" + dst + "' has no link";
  auto vertex = [&](const std::string& name, bool zone_route) -> int {
    for (int p : z.vertices) {
      const Point& pt = points_[static_cast<size_t>(p)];
      if (pt.name == name && (pt.is_zone >= 0) == zone_route) return pt.id;
    }
    return -1;
  };
  bool zone_route = !gw_src.empty() || !gw_dst.empty();
  int s = vertex(src, zone_route), d = vertex(dst, zone_route);
  if (s < 0 || d < 0)
    return "route from '" + src + "' to '" + dst + "': '" + (s < 0 ? src : dst) + "' is not a " +
           (zone_route ? "zone" : "host or router") + " of zone '" + z.id + "'";
  Hop fwd;
  if (zone_route) {
    fwd.gw_src = point(gw_src);
    fwd.gw_dst = point(gw_dst);
    if (fwd.gw_src < 0 || fwd.gw_dst < 0)
      return "zone route from '" + src + "' to '" + dst + "': unknown gateway '" + (fwd.gw_src < 0 ? gw_src : gw_dst) + "'";
  }
  if (std::string e = resolve(links, false, fwd.links); !e.empty()) return e;
  if (!z.routes.emplace(std::make_pair(s, d), fwd).second)
    return "route from '" + src + "' to '" + dst + "' is defined twice";
  if (symmetrical && s != d) {
    Hop rev;
    rev.gw_src = fwd.gw_dst;
    rev.gw_dst = fwd.gw_src;
    if (std::string e = resolve(links, true, rev.links); !e.empty()) return e;
    std::reverse(rev.links.begin(), rev.links.end());
    if (!z.routes.emplace(std::make_pair(d, s), rev).second)
      return "route from '" + dst + "' to '" + src + "' is defined twice (once as the reverse of a symmetrical route)";
  }
  return {};
}

// SimGrid's add_link_latency: the link joins the route, its latency the sum (in route order).
void Network::add_link_latency(std::vector<int>& links, double& lat, int l) const {
  links.push_back(l);
  lat += links_[static_cast<size_t>(l)].latency;
}

// FloydZone::do_seal: the loopback of a base zone, then Floyd-Warshall on link counts (a strictly
// shorter path only replaces a known one, so a direct route wins a tie).
void Network::seal_floyd(Zone& z) {
  const size_t n = z.vertices.size();
  constexpr unsigned long kNone = ~0UL;
  std::vector<std::vector<unsigned long>> cost(n, std::vector<unsigned long>(n, kNone));
  z.pred.assign(n, std::vector<int>(n, -1));
  for (const auto& [key, hop] : z.routes) {
    cost[static_cast<size_t>(key.first)][static_cast<size_t>(key.second)] = hop.links.size();
    z.pred[static_cast<size_t>(key.first)][static_cast<size_t>(key.second)] = key.first;
  }
  if (!z.recursive)
    for (size_t i = 0; i < n; ++i)
      if (!z.routes.count({static_cast<int>(i), static_cast<int>(i)})) {
        z.routes[{static_cast<int>(i), static_cast<int>(i)}] = Hop{-1, -1, {loopback_}};
        z.pred[i][i] = static_cast<int>(i);
        cost[i][i] = 1;
      }
  for (size_t c = 0; c < n; ++c)
    for (size_t a = 0; a < n; ++a)
      for (size_t b = 0; b < n; ++b)
        if (cost[a][c] < kNone && cost[c][b] < kNone && (cost[a][b] == kNone || cost[a][c] + cost[c][b] < cost[a][b])) {
          cost[a][b] = cost[a][c] + cost[c][b];
          z.pred[a][b] = z.pred[c][b];
        }
}

std::string Network::local_route(const Zone& z, int src, int dst, std::vector<int>& links, double& lat,
                                 int& gw_src, int& gw_dst) const {
  const Point& s = points_[static_cast<size_t>(src)];
  const Point& d = points_[static_cast<size_t>(dst)];
  if (z.routing == "Floyd") {
    std::vector<const Hop*> stack;
    int cur = d.id;
    do {
      int pred = z.pred[static_cast<size_t>(s.id)][static_cast<size_t>(cur)];
      if (pred < 0) return "no route from '" + s.name + "' to '" + d.name + "' in zone '" + z.id + "' (Floyd)";
      stack.push_back(&z.routes.at({pred, cur}));
      cur = pred;
    } while (cur != s.id);
    if (z.recursive) {
      gw_src = stack.back()->gw_src;
      gw_dst = stack.front()->gw_dst;
    }
    int prev_gw = -1;
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      const Hop& h = **it;
      if (z.recursive && prev_gw >= 0 && prev_gw != h.gw_src)
        if (std::string e = global_route(prev_gw, h.gw_src, links, lat, 1); !e.empty()) return e;
      for (int l : h.links) add_link_latency(links, lat, l);
      prev_gw = h.gw_dst;
    }
    return {};
  }
  if (z.routing == "Full") {
    auto it = z.routes.find({s.id, d.id});
    if (it != z.routes.end()) {
      for (int l : it->second.links) add_link_latency(links, lat, l);
      gw_src = it->second.gw_src;
      gw_dst = it->second.gw_dst;
    } else if (src == dst && !z.recursive) {
      add_link_latency(links, lat, loopback_);
    }
    return {};
  }
  if (z.routing == "None") return {};
  // Star zones (clusters, Cluster and Vivaldi zones).
  auto lb = z.loopback.find(s.id);
  if (src == dst && lb != z.loopback.end() && !lb->second.empty()) {
    for (int l : lb->second) add_link_latency(links, lat, l);
  } else {
    std::set<int> seen;
    auto add = [&](const std::map<int, std::vector<int>>& m, int v) {
      auto it = m.find(v);
      if (it == m.end()) return;
      for (int l : it->second)
        if (seen.insert(l).second) add_link_latency(links, lat, l);
    };
    add(z.up, s.id);
    add(z.down, d.id);
  }
  if (z.routing == "Vivaldi") {
    if (!s.coords || !d.coords)
      return "zone '" + z.id + "' is a Vivaldi zone: '" + (s.coords ? d.name : s.name) + "' needs coordinates";
    const auto& a = *s.coords;
    const auto& b = *d.coords;
    double dist = std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1])) + std::fabs(a[2]) +
                       std::fabs(b[2]);
    lat += dist / 1000.0;  // coordinates are in ms
  }
  return {};
}

std::string Network::global_route(int src, int dst, std::vector<int>& links, double& lat, int depth) const {
  if (depth > 64) return "routes between '" + points_[static_cast<size_t>(src)].name + "' and '" +
                          points_[static_cast<size_t>(dst)].name + "' loop through their gateways";
  auto path = [&](int p) {
    std::vector<int> out;
    for (int z = points_[static_cast<size_t>(p)].zone; z >= 0; z = zones_[static_cast<size_t>(z)].parent) out.push_back(z);
    return out;
  };
  std::vector<int> ps = path(src), pd = path(dst);
  if (ps.empty() || pd.empty() || ps.back() != pd.back()) return "hosts in different platforms";
  int father = ps.back();
  ps.pop_back();
  pd.pop_back();
  while (!ps.empty() && !pd.empty() && ps.back() == pd.back()) {
    father = ps.back();
    ps.pop_back();
    pd.pop_back();
  }
  int sa = ps.empty() ? -1 : ps.back(), da = pd.empty() ? -1 : pd.back();
  const Zone& common = zones_[static_cast<size_t>(father)];
  int gs = -1, gd = -1;
  if (sa < 0 && da < 0) return local_route(common, src, dst, links, lat, gs, gd);
  int sp = sa < 0 ? src : zone_points_.at(sa), dp = da < 0 ? dst : zone_points_.at(da);
  std::vector<int> hop;
  if (std::string e = local_route(common, sp, dp, hop, lat, gs, gd); !e.empty()) return e;
  if (gs < 0 || gd < 0)
    return "no zone route from '" + points_[static_cast<size_t>(sp)].name + "' to '" +
           points_[static_cast<size_t>(dp)].name + "' in zone '" + common.id + "' (SimGrid: bad gateways)";
  if (src != gs)
    if (std::string e = global_route(src, gs, links, lat, depth + 1); !e.empty()) return e;
  links.insert(links.end(), hop.begin(), hop.end());
  if (gd != dst)
    if (std::string e = global_route(gd, dst, links, lat, depth + 1); !e.empty()) return e;
  return {};
}

Result<Route> Network::route(const std::string& src, const std::string& dst) const {
  int s = point(src), d = point(dst);
  if (s < 0 || d < 0) return protocol::Error{"no host '" + (s < 0 ? src : dst) + "' in the network"};
  std::vector<int> links;
  double lat = 0;  // summed in SimGrid's order: the zone route, then the source side, then the destination's
  if (std::string e = global_route(s, d, links, lat, 0); !e.empty()) return protocol::Error{e};
  Route r;
  r.latency = lat;
  if (links.empty()) return r;  // nothing to cross: done when the latency is
  r.links = true;
  // The lone variable of the fair-bottleneck solve: its byte on every link (a shared link met
  // twice carries it twice), bounded by TCP-gamma / (2 x latency) once the latency is paid.
  std::map<int, int> weight;
  for (int l : links) ++weight[l];
  double rate = INFINITY;
  for (const auto& [l, w] : weight) {
    const NetLink& nl = links_[static_cast<size_t>(l)];
    rate = std::min(rate, nl.fatpipe ? nl.bandwidth / 1.0 : nl.bandwidth / static_cast<double>(w));
  }
  if (lat > 0) rate = std::min(rate, tcp_gamma_ / (2.0 * (lat * 1.0)));
  if (!(rate > 0)) return protocol::Error{"the route from '" + src + "' to '" + dst + "' has a link of no bandwidth"};
  r.rate = rate;
  return r;
}

}  // namespace vtime::sim::detail
