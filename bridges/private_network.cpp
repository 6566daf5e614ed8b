// A network namespace of the run's own whose loopback acknowledges at once (see private_network.h).
#include "private_network.h"

#include <netinet/in.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

namespace vtime::bridges {

namespace {

std::string sys_error(const std::string& what, int err) { return what + ": " + std::strerror(err); }

bool write_file(const char* path, const std::string& text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// A new network namespace for this process: directly with CAP_SYS_ADMIN, else inside a new user
// namespace where this user's ids map to themselves (files the daemons write stay the user's).
std::optional<std::string> unshare_network() {
  if (unshare(CLONE_NEWNET) == 0) return std::nullopt;
  int err = errno;
  if (err != EPERM) return sys_error("unshare(CLONE_NEWNET)", err);
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
    return sys_error("a network namespace needs root or unprivileged user namespaces; unshare(CLONE_NEWUSER)", errno);
  }
  if (!write_file("/proc/self/setgroups", "deny") ||
      !write_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n") ||
      !write_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n")) {
    return sys_error("mapping the user's ids into the new user namespace", errno);
  }
  return std::nullopt;
}

std::optional<std::string> loopback_up() {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return sys_error("socket", errno);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  std::optional<std::string> err;
  if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0) {
    err = sys_error("reading lo's flags", errno);
  } else {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) err = sys_error("bringing lo up", errno);
  }
  close(s);
  return err;
}

// One rtnetlink request with room for its attributes.
struct RouteRequest {
  nlmsghdr header;
  rtmsg route;
  alignas(NLMSG_ALIGNTO) unsigned char attrs[256];

  rtattr* add(unsigned short type, const void* data, size_t len) {
    auto* a = reinterpret_cast<rtattr*>(reinterpret_cast<unsigned char*>(this) + NLMSG_ALIGN(header.nlmsg_len));
    a->rta_type = type;
    a->rta_len = static_cast<unsigned short>(RTA_LENGTH(len));
    if (len > 0) std::memcpy(RTA_DATA(a), data, len);
    header.nlmsg_len = NLMSG_ALIGN(header.nlmsg_len) + RTA_ALIGN(a->rta_len);
    return a;
  }
  // Closes a nested attribute opened by add(type, nullptr, 0).
  void close(rtattr* nest) {
    nest->rta_len = static_cast<unsigned short>(reinterpret_cast<unsigned char*>(this) + header.nlmsg_len -
                                                reinterpret_cast<unsigned char*>(nest));
  }
};

// Replaces the kernel's local route to `dst`/`prefix` on lo (source 127.0.0.1) by the same route
// with quickack set.
std::optional<std::string> quickack_route(int nl, in_addr dst, int prefix, unsigned lo_index, unsigned seq) {
  in_addr src{htonl(INADDR_LOOPBACK)};
  RouteRequest req{};
  req.header.nlmsg_len = NLMSG_LENGTH(sizeof(rtmsg));
  req.header.nlmsg_type = RTM_NEWROUTE;
  req.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
  req.header.nlmsg_seq = seq;
  req.route.rtm_family = AF_INET;
  req.route.rtm_dst_len = static_cast<unsigned char>(prefix);
  req.route.rtm_table = RT_TABLE_LOCAL;
  req.route.rtm_protocol = RTPROT_KERNEL;
  req.route.rtm_scope = RT_SCOPE_HOST;
  req.route.rtm_type = RTN_LOCAL;
  req.add(RTA_DST, &dst, sizeof dst);
  req.add(RTA_OIF, &lo_index, sizeof lo_index);
  req.add(RTA_PREFSRC, &src, sizeof src);
  uint32_t priority = 0;
  req.add(RTA_PRIORITY, &priority, sizeof priority);
  rtattr* metrics = req.add(RTA_METRICS, nullptr, 0);
  uint32_t on = 1;
  req.add(RTAX_QUICKACK, &on, sizeof on);
  req.close(metrics);

  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(nl, &req, req.header.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    return sys_error("sending a route to the kernel", errno);
  }
  alignas(nlmsghdr) unsigned char reply[1024];
  for (;;) {
    ssize_t n = recv(nl, reply, sizeof reply, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return sys_error("reading the kernel's answer about a route", errno);
    }
    for (auto* h = reinterpret_cast<nlmsghdr*>(reply); NLMSG_OK(h, static_cast<unsigned>(n)); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_seq != seq || h->nlmsg_type != NLMSG_ERROR) continue;
      int err = -static_cast<nlmsgerr*>(NLMSG_DATA(h))->error;
      if (err == 0) return std::nullopt;
      return sys_error("setting quickack on the loopback route", err);
    }
  }
}

}  // namespace

Network enter_private_network() {
  if (auto err = unshare_network()) return {Network::kHost, *err};
  // From here on the process is in the new namespace, whose loopback starts down.
  if (auto err = loopback_up()) return {Network::kBroken, *err};
  auto no_quickack = [](const std::string& what) { return Network{Network::kPrivate, what}; };
  unsigned lo = if_nametoindex("lo");
  if (lo == 0) return no_quickack(sys_error("if_nametoindex(lo)", errno));
  int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (nl < 0) return no_quickack(sys_error("socket(NETLINK_ROUTE)", errno));
  // Connections to 127.0.0.1 use the /32 route, others in 127/8 the /8 one.
  auto err = quickack_route(nl, in_addr{htonl(IN_LOOPBACKNET << IN_CLASSA_NSHIFT)}, 8, lo, 1);
  if (!err) err = quickack_route(nl, in_addr{htonl(INADDR_LOOPBACK)}, 32, lo, 2);
  // ::1 keeps the usual acknowledgements: the kernel's route to it has metric 0, which a route
  // given through rtnetlink cannot have (0 means the default, 1024), and the daemons vtime starts
  // listen on 127.0.0.1.
  close(nl);
  if (err) return no_quickack(*err);
  return {Network::kPrivate, ""};
}

std::optional<std::string> enter_private_hostname(const std::string& name) {
  if (unshare(CLONE_NEWUTS) != 0) return sys_error("unshare(CLONE_NEWUTS)", errno);
  if (sethostname(name.data(), name.size()) != 0) return sys_error("sethostname", errno);
  return std::nullopt;
}

}  // namespace vtime::bridges
