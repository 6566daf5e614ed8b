// Free loopback ports (see loopback_ports.h).
#include "loopback_ports.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <string>

namespace vtime::bridges {

namespace {

// Binds (or connects) a fresh TCP socket to 127.0.0.1:port; true when that succeeds.
bool try_loopback(int port, bool connect_to, bool reuse_address) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  auto* addr = reinterpret_cast<sockaddr*>(&a);
  int one = 1;
  if (reuse_address) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
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
  const int span = 4000;  // room for parallel runs
  if (eph_lo - 10000 >= span) return {10000, eph_lo};
  if (65535 - eph_hi >= span) return {eph_hi + 1, 65536};
  return {20000, 60000};  // the ephemeral range covers nearly everything: best effort
}

}  // namespace

bool loopback_port_free(int port, bool reuse_address) { return try_loopback(port, false, reuse_address); }
bool loopback_port_answers(int port) { return try_loopback(port, true, false); }

namespace {

constexpr int kStride = 97;  // between the blocks tried, a reservation's unit

// Reserves stride `slot` of the port space for this process: an abstract Unix socket bound to a
// name of its own, which no other process can bind while we hold it and which the kernel drops
// when we exit, however we exit. -1 when another run holds it.
int reserve_slot(int slot) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  char name[64];
  int n = snprintf(name, sizeof name, "vtime-loopback-ports-%d", slot);
  memcpy(a.sun_path + 1, name, static_cast<size_t>(n));  // sun_path[0] == 0: the abstract namespace
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + static_cast<size_t>(n));
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), len) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

LoopbackPorts::LoopbackPorts(int count, bool reuse_address) {
  const auto [lo, hi] = daemon_port_range();
  const int slots = (hi - lo - count) / kStride;
  // Always from the same place (see the header): a run alone on its machine gets the same ports
  // every time.
  for (int slot = 0; slot < slots; ++slot) {
    int base = lo + slot * kStride;
    std::vector<int> locks;
    bool ok = true;
    for (int s = slot; ok && s * kStride < base - lo + count; ++s) {
      int fd = reserve_slot(s);
      ok = fd >= 0;
      if (ok) locks.push_back(fd);
    }
    for (int p = base; p < base + count && ok; ++p) ok = loopback_port_free(p, reuse_address);
    if (ok) {
      base_ = base;
      locks_ = std::move(locks);
      return;
    }
    for (int fd : locks) close(fd);
  }
  throw std::runtime_error("no run of " + std::to_string(count) + " free loopback ports for the daemons");
}

LoopbackPorts::~LoopbackPorts() { release(); }

LoopbackPorts::LoopbackPorts(LoopbackPorts&& o) noexcept : base_(o.base_), locks_(std::move(o.locks_)) { o.locks_.clear(); }

LoopbackPorts& LoopbackPorts::operator=(LoopbackPorts&& o) noexcept {
  if (this != &o) {
    release();
    base_ = o.base_;
    locks_ = std::move(o.locks_);
    o.locks_.clear();
  }
  return *this;
}

void LoopbackPorts::release() {
  for (int fd : locks_) close(fd);
  locks_.clear();
}

}  // namespace vtime::bridges
