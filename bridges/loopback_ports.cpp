// Free loopback ports (see loopback_ports.h).
#include "loopback_ports.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
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

}  // namespace

bool loopback_port_free(int port) { return try_loopback(port, false); }
bool loopback_port_answers(int port) { return try_loopback(port, true); }

int find_loopback_ports(int count) {
  const int lo = 20000, hi = 60000;
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
