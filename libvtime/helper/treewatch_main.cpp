// vtime-treewatch: loads the tree watch's eBPF program for an unprivileged vtime and hands it
// over (libvtime/src/tree_watch_load.h). Installed with the file capabilities CAP_BPF and
// CAP_PERFMON and nothing else (docs/install.md "Without root"); started by vtime with its end
// of a socket pair as descriptor 3, never by hand.
//
// What it does with those capabilities, and only that: load the one program embedded in it,
// owned by the process on the other end of the socket (its credentials, from the kernel), attach
// it, send the descriptors, exit. It reads no argument, no file and no environment variable (the
// environment is cleared first), so the caller chooses nothing but the moment.
#include "tree_watch_load.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

constexpr int kSocket = 3;

}  // namespace

int main() {
  clearenv();
  int type = 0;
  socklen_t len = sizeof type;
  ucred peer{};
  socklen_t plen = sizeof peer;
  if (getsockopt(kSocket, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET ||
      getsockopt(kSocket, SOL_SOCKET, SO_PEERCRED, &peer, &plen) != 0 || peer.pid <= 0) {
    fprintf(stderr, "vtime-treewatch: started by vtime, not by hand (descriptor 3 is not its socket)\n");
    _exit(2);
  }
  vtime::detail::TreeWatchFds fds;
  std::string why;
  // The owner must be the caller's own: a peer of another user (a socket passed on) is refused.
  if (peer.uid != getuid()) {
    why = "the socket's other end belongs to another user";
  } else {
    vtime::detail::load_tree_watch(peer.pid, fds, why);
  }
  // _exit: nothing of ours to flush, and no atexit handler of a library should run with these
  // capabilities.
  _exit(vtime::detail::send_tree_watch(kSocket, fds, why) && why.empty() ? 0 : 1);
}
