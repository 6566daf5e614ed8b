// A deliberately small reader for SimGrid platform files: enough XML (tags, attributes,
// entities, comments, <!DOCTYPE>, <?xml?>) to list hosts, and nothing more.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "network.h"
#include "vtime/sim/platform.h"

namespace vtime::sim {

using protocol::Error;

namespace {

struct XmlFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Tag {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attrs;
  bool closing = false;       // </name>
  bool self_closing = false;  // <name/>
  int line = 0;

  const std::string* attr(std::string_view key) const {
    for (const auto& [k, v] : attrs)
      if (k == key) return &v;
    return nullptr;
  }
};

class Scanner {
 public:
  Scanner(const std::string& text, std::string origin) : s_(text), origin_(std::move(origin)) {}

  [[noreturn]] void fail(int line, const std::string& why) const {
    throw XmlFailure(origin_ + " line " + std::to_string(line) + ": " + why);
  }

  // Next start or end tag; false at end of input. Text, comments and declarations are skipped.
  bool next(Tag& tag) {
    for (;;) {
      size_t lt = s_.find('<', pos_);
      if (lt == std::string::npos) return false;
      advance_to(lt);
      if (starts_with("<!--")) { skip_past("-->", "unterminated comment"); continue; }
      if (starts_with("<![CDATA[")) { skip_past("]]>", "unterminated CDATA section"); continue; }
      if (starts_with("<?")) { skip_past("?>", "unterminated <? ... ?> declaration"); continue; }
      if (starts_with("<!")) { skip_declaration(); continue; }
      read_tag(tag);
      return true;
    }
  }

  int line() const { return line_; }

 private:
  bool starts_with(std::string_view p) const { return s_.compare(pos_, p.size(), p) == 0; }
  void advance_to(size_t p) {
    line_ += static_cast<int>(std::count(s_.begin() + static_cast<long>(pos_), s_.begin() + static_cast<long>(p), '\n'));
    pos_ = p;
  }
  void skip_past(std::string_view end, const char* why) {
    size_t e = s_.find(end, pos_);
    if (e == std::string::npos) fail(line_, why);
    advance_to(e + end.size());
  }
  // <!DOCTYPE ...> may hold an internal subset in [...] containing '>'.
  void skip_declaration() {
    int depth = 0;
    for (size_t p = pos_; p < s_.size(); ++p) {
      if (s_[p] == '[') ++depth;
      else if (s_[p] == ']') --depth;
      else if (s_[p] == '>' && depth <= 0) { advance_to(p + 1); return; }
    }
    fail(line_, "unterminated <!...> declaration");
  }
  static bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':';
  }
  void skip_space(size_t& p) {
    while (p < s_.size() && std::isspace(static_cast<unsigned char>(s_[p]))) ++p;
  }
  std::string read_name(size_t& p, int line, const std::string& what) {
    size_t b = p;
    while (p < s_.size() && is_name_char(s_[p])) ++p;
    if (p == b) fail(line, "expected " + what);
    return s_.substr(b, p - b);
  }
  std::string decode(std::string_view v, int line) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] != '&') { out += v[i]; continue; }
      size_t semi = v.find(';', i);
      if (semi == std::string_view::npos) fail(line, "unterminated entity in attribute value");
      std::string_view ent = v.substr(i + 1, semi - i - 1);
      if (ent == "amp") out += '&';
      else if (ent == "lt") out += '<';
      else if (ent == "gt") out += '>';
      else if (ent == "quot") out += '"';
      else if (ent == "apos") out += '\'';
      else if (!ent.empty() && ent[0] == '#') {
        unsigned code = 0;
        bool hex = ent.size() > 1 && (ent[1] == 'x' || ent[1] == 'X');
        std::string_view digits = ent.substr(hex ? 2 : 1);
        auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), code, hex ? 16 : 10);
        if (ec != std::errc() || ptr != digits.data() + digits.size() || code == 0 || code > 0x10FFFF)
          fail(line, "bad character reference '&" + std::string(ent) + ";'");
        append_utf8(out, code);
      } else {
        fail(line, "unknown entity '&" + std::string(ent) + ";'");
      }
      i = semi;
    }
    return out;
  }
  static void append_utf8(std::string& out, unsigned c) {
    if (c < 0x80) { out += static_cast<char>(c); return; }
    if (c < 0x800) { out += static_cast<char>(0xC0 | (c >> 6)); }
    else {
      if (c < 0x10000) { out += static_cast<char>(0xE0 | (c >> 12)); }
      else { out += static_cast<char>(0xF0 | (c >> 18)); out += static_cast<char>(0x80 | ((c >> 12) & 0x3F)); }
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    }
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  void read_tag(Tag& tag) {
    tag = Tag{};
    tag.line = line_;
    size_t p = pos_ + 1;
    if (p < s_.size() && s_[p] == '/') { tag.closing = true; ++p; }
    tag.name = read_name(p, tag.line, "an element name after '<'");
    for (;;) {
      skip_space(p);
      if (p >= s_.size()) fail(tag.line, "unterminated <" + tag.name + "> tag");
      if (s_[p] == '>') { ++p; break; }
      if (s_[p] == '/' && p + 1 < s_.size() && s_[p + 1] == '>' && !tag.closing) {
        tag.self_closing = true;
        p += 2;
        break;
      }
      if (tag.closing) fail(tag.line, "unexpected text in </" + tag.name + ">");
      std::string key = read_name(p, tag.line, "an attribute name in <" + tag.name + ">");
      skip_space(p);
      if (p >= s_.size() || s_[p] != '=') fail(tag.line, "attribute '" + key + "' of <" + tag.name + "> has no value");
      ++p;
      skip_space(p);
      if (p >= s_.size() || (s_[p] != '"' && s_[p] != '\''))
        fail(tag.line, "value of attribute '" + key + "' must be quoted");
      char q = s_[p++];
      size_t e = s_.find(q, p);
      if (e == std::string::npos) fail(tag.line, "unterminated value of attribute '" + key + "'");
      tag.attrs.emplace_back(key, decode(std::string_view(s_).substr(p, e - p), tag.line));
      p = e + 1;
    }
    advance_to(p);
  }

  const std::string& s_;
  std::string origin_;
  size_t pos_ = 0;
  int line_ = 1;
};

struct Host {
  std::string name;
  StringPairs props;
  int zone = -1;   // index in zones, -1 for cluster hosts (their zone is the cluster itself)
  int line = 0;
  double speed = 1e9;
};

struct Frame {
  std::string name;
  enum Kind { zone, host, cluster, route, config, other } kind = other;
  Tag tag;                        // route: its attributes
  std::vector<std::pair<std::string, std::string>> links;  // route: its <link_ctn>s
  int index = -1;                 // zone index or host index
  std::vector<size_t> hosts;      // cluster: its hosts
  int line = 0;
};

// "0-15", "0-3,5,7-9"
std::vector<long> parse_radical(const std::string& r, const Scanner& sc, int line) {
  std::vector<long> out;
  std::stringstream ss(r);
  std::string part;
  while (std::getline(ss, part, ',')) {
    auto num = [&](std::string_view s) {
      long v = 0;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || p != s.data() + s.size() || v < 0)
        sc.fail(line, "bad cluster radical '" + r + "' (expected e.g. '0-15' or '0-3,5')");
      return v;
    };
    size_t dash = part.find('-');
    long lo = num(std::string_view(part).substr(0, dash));
    long hi = dash == std::string::npos ? lo : num(std::string_view(part).substr(dash + 1));
    if (hi < lo || hi - lo > 1'000'000) sc.fail(line, "bad cluster radical '" + r + "'");
    for (long i = lo; i <= hi; ++i) out.push_back(i);
  }
  if (out.empty()) sc.fail(line, "empty cluster radical");
  return out;
}

const std::string& require_attr(const Tag& t, std::string_view key, const Scanner& sc) {
  const std::string* v = t.attr(key);
  if (v == nullptr) sc.fail(t.line, "<" + t.name + "> has no '" + std::string(key) + "' attribute");
  return *v;
}

Platform build(std::vector<Host> hosts, const std::vector<StringPairs>& zones,
               const std::string& origin, const std::string& master_name, const detail::Network* net) {
  // SimGrid keeps hosts in a name-ordered map; Batsim numbers machines in that order.
  std::sort(hosts.begin(), hosts.end(), [](const Host& a, const Host& b) { return a.name < b.name; });
  for (size_t i = 1; i < hosts.size(); ++i)
    if (hosts[i].name == hosts[i - 1].name)
      throw XmlFailure(origin + ": host '" + hosts[i].name + "' is defined twice (lines " +
                       std::to_string(std::min(hosts[i].line, hosts[i - 1].line)) + " and " +
                       std::to_string(std::max(hosts[i].line, hosts[i - 1].line)) + ")");
  Platform p;
  p.master_name.clear();
  for (auto& h : hosts) {
    std::string role;
    StringPairs props;
    for (auto& kv : h.props) {
      if (kv.first == "role") role = kv.second;
      else props.push_back(kv);
    }
    if (role == "master" || h.name == master_name) {
      if (!p.master_name.empty())
        throw XmlFailure(origin + ": two master hosts ('" + p.master_name + "' and '" + h.name +
                         "'); exactly one host may be named '" + master_name + "' or have role 'master'");
      p.master_name = h.name;
      continue;
    }
    Machine m;
    m.id = static_cast<int>(p.machines.size());
    m.name = h.name;
    m.role = role == "storage" ? "storage" : "";
    m.properties = std::move(props);
    m.speed = h.speed;
    if (h.zone >= 0) m.zone_properties = zones[static_cast<size_t>(h.zone)];
    p.machines.push_back(std::move(m));
  }
  if (p.master_name.empty())
    throw XmlFailure(origin + ": no master host: one host must be named '" + master_name +
                     "' or carry <prop id=\"role\" value=\"master\"/> (it runs the scheduler and "
                     "computes no job)");
  if (p.compute_count() == 0) throw XmlFailure(origin + ": no compute host besides the master host");
  if (net) {
    // What Batsim's internal messages cost: every one goes to the server, on the master host.
    auto self = net->route(p.master_name, p.master_name);
    if (!self) throw XmlFailure(origin + ": " + self.error());
    p.master_route = *self;
    for (Machine& m : p.machines) {
      if (!m.role.empty()) continue;  // storage: no job runs there, so it sends nothing
      auto r = net->route(m.name, p.master_name);
      if (!r) throw XmlFailure(origin + ": " + r.error());
      m.to_master = *r;
    }
  }
  return p;
}

}  // namespace

int Platform::compute_count() const {
  return static_cast<int>(std::count_if(machines.begin(), machines.end(),
                                        [](const Machine& m) { return m.role.empty(); }));
}

bool Platform::is_compute(int id) const {
  return id >= 0 && static_cast<size_t>(id) < machines.size() && machines[static_cast<size_t>(id)].role.empty();
}

Result<Platform> parse_platform_xml(const std::string& text, const std::string& origin,
                                    const std::string& master_name) {
  try {
    Scanner sc(text, origin);
    std::vector<Host> hosts;
    std::vector<StringPairs> zones;
    std::vector<Frame> stack;
    detail::Network net;
    std::vector<std::string> ignored;
    auto note = [&](const std::string& what) {
      if (std::find(ignored.begin(), ignored.end(), what) == ignored.end()) ignored.push_back(what);
    };
    auto check = [&](const Tag& t, const std::string& err) {
      if (!err.empty()) sc.fail(t.line, err);
    };
    auto unit = [&](const Tag& t, std::string_view key, auto parse, const char* dflt) -> double {
      const std::string* v = t.attr(key);
      std::string value = v ? *v : std::string(dflt ? dflt : "");
      if (!v && !dflt) sc.fail(t.line, "<" + t.name + "> has no '" + std::string(key) + "' attribute");
      if (value.empty()) return 0;
      auto x = parse(value);
      if (!x) sc.fail(t.line, "<" + t.name + "> attribute " + std::string(key) + "=\"" + value + "\" is not a value SimGrid reads");
      return *x;
    };
    auto refuse_traces = [&](const Tag& t) {
      for (const char* k : {"availability_file", "state_file", "speed_file", "bandwidth_file", "latency_file"})
        if (t.attr(k))
          sc.fail(t.line, "<" + t.name + "> has '" + k + "': vtime sim does not model availability or speed traces "
                          "(use --batsim with real Batsim)");
    };
    bool seen_root = false;
    Tag t;
    while (sc.next(t)) {
      if (t.closing) {
        if (stack.empty() || stack.back().name != t.name)
          sc.fail(t.line, "</" + t.name + "> does not close " +
                              (stack.empty() ? std::string("any open element")
                                             : "<" + stack.back().name + "> opened at line " + std::to_string(stack.back().line)));
        Frame done = std::move(stack.back());
        stack.pop_back();
        if (done.kind == Frame::zone) net.close_zone();
        if (done.kind == Frame::route) {
          const Tag& r = done.tag;
          const std::string* sym = r.attr("symmetrical");
          bool symmetrical = !sym || *sym == "YES" || *sym == "yes";
          bool zone_route = r.name != "route";
          check(r, net.add_route(require_attr(r, zone_route ? "src" : "src", sc), require_attr(r, "dst", sc),
                                 zone_route ? require_attr(r, "gw_src", sc) : "",
                                 zone_route ? require_attr(r, "gw_dst", sc) : "", done.links, symmetrical));
        }
        continue;
      }
      if (!seen_root) {
        if (t.name != "platform") sc.fail(t.line, "not a SimGrid platform file (root element is <" + t.name + ">, expected <platform>)");
        seen_root = true;
      }
      Frame f;
      f.name = t.name;
      f.line = t.line;
      int zone = -1;
      for (auto it = stack.rbegin(); it != stack.rend(); ++it)
        if (it->kind == Frame::zone) { zone = it->index; break; }
      bool in_config = !stack.empty() && stack.back().kind == Frame::config;
      if (t.name == "zone" || t.name == "AS") {
        f.kind = Frame::zone;
        f.index = static_cast<int>(zones.size());
        zones.emplace_back();
        const std::string* routing = t.attr("routing");
        check(t, net.open_zone(require_attr(t, "id", sc), routing ? *routing : "None"));
        if (t.self_closing) net.close_zone();
      } else if (t.name == "host") {
        f.kind = Frame::host;
        f.index = static_cast<int>(hosts.size());
        refuse_traces(t);
        const std::string* coords = t.attr("coordinates");
        hosts.push_back(Host{require_attr(t, "id", sc), {}, zone, t.line,
                             static_cast<double>(unit(t, "speed", detail::parse_speed, "1Gf"))});
        check(t, net.add_host(hosts.back().name, coords ? *coords : ""));
      } else if (t.name == "cluster" || t.name == "cabinet") {
        f.kind = Frame::cluster;
        const std::string& prefix = require_attr(t, "prefix", sc);
        const std::string& radical = require_attr(t, "radical", sc);
        const std::string* suffix = t.attr("suffix");
        std::vector<long> radicals = parse_radical(radical, sc, t.line);
        // SimGrid requires speed, bw and lat; vtime's older reader did not, so a file without them
        // still reads: 1 Gflop/s, and no network inside the cluster.
        double speed = static_cast<double>(unit(t, "speed", detail::parse_speed, "1Gf"));
        for (long i : radicals) {
          f.hosts.push_back(hosts.size());
          hosts.push_back(Host{prefix + std::to_string(i) + (suffix ? *suffix : ""), {}, -1, t.line, speed});
        }
        if (t.name == "cluster") {
          if (const std::string* topo = t.attr("topology"); topo && *topo != "FLAT")
            sc.fail(t.line, "cluster '" + require_attr(t, "id", sc) + "' has topology " + *topo +
                                ": vtime sim only models flat clusters (use --batsim with real Batsim)");
          detail::Network::Cluster c;
          c.id = require_attr(t, "id", sc);
          c.prefix = prefix;
          c.suffix = suffix ? *suffix : "";
          c.radicals = radicals;
          c.bw = unit(t, "bw", detail::parse_bandwidth, "");
          c.lat = unit(t, "lat", detail::parse_time, "");
          c.has_links = t.attr("bw") != nullptr;
          c.bb_bw = unit(t, "bb_bw", detail::parse_bandwidth, "");
          c.bb_lat = unit(t, "bb_lat", detail::parse_time, "");
          c.loopback_bw = unit(t, "loopback_bw", detail::parse_bandwidth, "");
          c.loopback_lat = unit(t, "loopback_lat", detail::parse_time, "");
          c.limiter = unit(t, "limiter_link", detail::parse_bandwidth, "");
          if (const std::string* v = t.attr("sharing_policy")) c.policy = *v;
          if (const std::string* v = t.attr("bb_sharing_policy")) c.bb_policy = *v;
          if (const std::string* v = t.attr("router_id")) c.router_id = *v;
          check(t, net.add_cluster(c));
        } else {
          check(t, net.add_cabinet(prefix, suffix ? *suffix : "", radicals, unit(t, "bw", detail::parse_bandwidth, nullptr),
                                   unit(t, "lat", detail::parse_time, nullptr)));
        }
      } else if (t.name == "router") {
        const std::string* coords = t.attr("coordinates");
        check(t, net.add_router(require_attr(t, "id", sc), coords ? *coords : ""));
      } else if (t.name == "link") {
        refuse_traces(t);
        const std::string* policy = t.attr("sharing_policy");
        check(t, net.add_link(require_attr(t, "id", sc), unit(t, "bandwidth", detail::parse_bandwidth, nullptr),
                              unit(t, "latency", detail::parse_time, "0"), policy ? *policy : "SHARED"));
      } else if (t.name == "backbone") {
        check(t, net.add_backbone(require_attr(t, "id", sc), unit(t, "bandwidth", detail::parse_bandwidth, nullptr),
                                  unit(t, "latency", detail::parse_time, nullptr)));
      } else if (t.name == "host_link") {
        check(t, net.add_host_link(require_attr(t, "id", sc), require_attr(t, "up", sc), require_attr(t, "down", sc)));
      } else if (t.name == "route" || t.name == "zoneRoute" || t.name == "ASroute") {
        f.kind = Frame::route;
        f.tag = t;
        if (t.self_closing) sc.fail(t.line, "<" + t.name + "> has no link");
      } else if (t.name == "link_ctn") {
        if (stack.empty() || stack.back().kind != Frame::route) sc.fail(t.line, "<link_ctn> outside a route");
        const std::string* dir = t.attr("direction");
        stack.back().links.emplace_back(require_attr(t, "id", sc), dir ? *dir : "NONE");
      } else if (t.name == "bypassRoute" || t.name == "bypassZoneRoute" || t.name == "bypassASroute" ||
                 t.name == "peer" || t.name == "trace" || t.name == "trace_connect" || t.name == "include" ||
                 t.name == "disk" || t.name == "storage" || t.name == "storage_type" || t.name == "mount") {
        sc.fail(t.line, "<" + t.name + "> is not modelled by vtime sim (use --batsim with real Batsim)");
      } else if (t.name == "config") {
        f.kind = Frame::config;
      } else if (t.name == "prop" && in_config) {
        const std::string& key = require_attr(t, "id", sc);
        const std::string& value = require_attr(t, "value", sc);
        if (key == "network/TCP-gamma" || key == "network/TCP_gamma" || key == "network/loopback-lat") {
          auto v = key == "network/loopback-lat" ? detail::parse_time(value) : std::optional<double>(std::strtod(value.c_str(), nullptr));
          if (!v) sc.fail(t.line, "config '" + key + "' has a bad value '" + value + "'");
          net.set_config(key, *v);
        } else if (key == "network/loopback-bw") {
          auto v = detail::parse_bandwidth(value);
          if (!v) sc.fail(t.line, "config '" + key + "' has a bad value '" + value + "'");
          net.set_config(key, *v);
        } else if (key.rfind("contexts/", 0) != 0 && key.rfind("network/model", 0) != 0 &&
                   key.rfind("network/coordinates", 0) != 0) {
          note("the platform's SimGrid configuration '" + key + "' is ignored");
        }
      } else if (t.name == "prop" && !stack.empty()) {
        Frame& parent = stack.back();
        if (parent.kind == Frame::zone || parent.kind == Frame::host || parent.kind == Frame::cluster) {
          std::pair<std::string, std::string> kv{require_attr(t, "id", sc), require_attr(t, "value", sc)};
          if (kv.first.rfind("watt", 0) == 0 || kv.first == "sleep_pstates")
            note("the platform's energy properties are ignored (as by real Batsim without --energy)");
          if (parent.kind == Frame::zone) zones[static_cast<size_t>(parent.index)].push_back(kv);
          else if (parent.kind == Frame::host) hosts[static_cast<size_t>(parent.index)].props.push_back(kv);
          else for (size_t h : parent.hosts) hosts[h].props.push_back(kv);  // SimGrid copies cluster props to each host
        }
      }
      if (!t.self_closing) stack.push_back(std::move(f));
    }
    if (!seen_root) sc.fail(sc.line(), "no XML element found (expected <platform>)");
    if (!stack.empty()) sc.fail(sc.line(), "<" + stack.back().name + "> opened at line " + std::to_string(stack.back().line) + " is never closed");
    Platform p = build(std::move(hosts), zones, origin, master_name, &net);
    p.ignored = std::move(ignored);
    return p;
  } catch (const XmlFailure& e) {
    return Error{e.what()};
  }
}

Result<Platform> load_platform_xml(const std::string& path, const std::string& master_name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot read platform file '" + path + "'"};
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_platform_xml(ss.str(), "platform '" + path + "'", master_name);
}

Result<Platform> make_platform(int n, const std::string& master_name) {
  try {
    std::vector<Host> hosts;
    hosts.push_back(Host{master_name, {}, 0, 0});
    for (int i = 0; i < n; ++i) hosts.push_back(Host{"host" + std::to_string(i), {}, 0, 0});
    return build(std::move(hosts), {StringPairs{}}, "--hosts " + std::to_string(n), master_name, nullptr);
  } catch (const XmlFailure& e) {
    return Error{e.what()};
  }
}

}  // namespace vtime::sim
