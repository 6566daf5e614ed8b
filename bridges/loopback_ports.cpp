// Free loopback ports (see loopback_ports.h).
#include "loopback_ports.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <utility>
#include <string>

namespace vtime::bridges {

namespace {

// Binds (or connects) a fresh TCP socket to 127.0.0.1:port; true when that succeeds.
bool try_loopback(int port, bool connect_to) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  auto* addr = reinterpret_cast<sockaddr*>(&a);
  bool ok = (connect_to ? connect(fd, addr, sizeof a) : bind(fd, addr, sizeof a)) == 0;
  close(fd);
  return ok;
}

std::pair<int, int> daemon_port_range() {
  // The kernel's ephemeral range (the local ports of outgoing connections), 32768-60999 by
  // default. The ports are chosen before the daemons bind them, seconds later for the last ones,
  // and meanwhile the first daemons connect to each other: a port inside that range was taken as
  // the local end of such a connection (kube-scheduler then failed with "address already in use").
  int eph_lo = 32768, eph_hi = 60999;
  if (FILE* f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re")) {
    if (fscanf(f, "%d %d", &eph_lo, &eph_hi) != 2) eph_lo = 32768, eph_hi = 60999;
    fclose(f);
  }
  const int span = 4000;  // enough for parallel runs to start their search far apart
  if (eph_lo - 10000 >= span) return {10000, eph_lo};
  if (65535 - eph_hi >= span) return {eph_hi + 1, 65536};
  return {20000, 60000};  // the ephemeral range covers nearly everything: best effort
}

}  // namespace

bool loopback_port_free(int port) { return try_loopback(port, false); }
bool loopback_port_answers(int port) { return try_loopback(port, true); }

int find_loopback_ports(int count) {
  const auto [lo, hi] = daemon_port_range();
  int start = lo + static_cast<int>((static_cast<unsigned>(getpid()) * 7919u) % static_cast<unsigned>(hi - lo));
  for (int tries = 0; tries < 400; ++tries) {
    int base = lo + (start - lo + tries * 97) % (hi - lo - count);
    bool all = true;
    for (int p = base; p < base + count && all; ++p) all = loopback_port_free(p);
    if (all) return base;
  }
  throw std::runtime_error("no run of " + std::to_string(count) + " free loopback ports for the daemons");
}

}  // namespace vtime::bridges
