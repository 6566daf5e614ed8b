// Loading the tree watch's program and passing its descriptors (see tree_watch_load.h). Built only
// with libbpf and a BPF compiler; linked into libvtime and into the vtime-treewatch helper.
#include "tree_watch_load.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

// The compiled program (libvtime/bpf/tree_watch.bpf.c), embedded by the build.
#include "tree_watch_bpf.inc"

namespace vtime::detail {

namespace {

// The message's fixed part; the descriptors travel as SCM_RIGHTS in the order counters, ring,
// tasks, programs, links.
struct Header {
  uint32_t magic;  // kMagic: the helper and vtime come from one build
  uint32_t counters_size;
  uint32_t ring_size;
  uint32_t programs;
  uint32_t links;
  char error[236];  // empty on success
};
constexpr uint32_t kMagic = 0x76747731;  // "vtw1"
constexpr size_t kMaxFds = 64;

// libbpf prints nothing: the caller says why loading failed in one line (libbpf's own lines would
// only repeat it, on a terminal that did not ask).
int quiet_print(enum libbpf_print_level, const char*, va_list) { return 0; }

// A descriptor of our own for one libbpf hands out (libbpf closes its own with the object).
int keep(int fd) { return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 3); }

// Sets the program's read-only `owner_tgid` before load (libbpf freezes .rodata at load).
bool set_owner(bpf_object* obj, pid_t owner) {
  bpf_map* map;
  bpf_object__for_each_map(map, obj) {
    const char* name = bpf_map__name(map);
    size_t n = strlen(name);
    if (!bpf_map__is_internal(map) || n < 7 || strcmp(name + n - 7, ".rodata") != 0) continue;
    size_t size = 0;
    void* v = const_cast<void*>(bpf_map__initial_value(map, &size));
    if (!v || size < sizeof(int32_t)) return false;
    int32_t o = owner;
    memcpy(v, &o, sizeof o);  // owner_tgid is the only read-only datum
    return true;
  }
  return false;
}

bool take_maps(bpf_object* obj, TreeWatchFds& out, std::string& why) {
  bpf_map* map;
  bpf_object__for_each_map(map, obj) {
    const char* name = bpf_map__name(map);
    size_t n = strlen(name);
    if (bpf_map__is_internal(map) && n >= 4 && strcmp(name + n - 4, ".bss") == 0) {
      out.counters = keep(bpf_map__fd(map));
      out.counters_size = bpf_map__value_size(map);
    } else if (strcmp(name, "tree_tasks") == 0) {
      out.tasks = keep(bpf_map__fd(map));
    } else if (strcmp(name, "idle_ring") == 0) {
      out.ring = keep(bpf_map__fd(map));
      out.ring_size = bpf_map__max_entries(map);
    }
  }
  if (out.counters < 0 || out.tasks < 0 || out.ring < 0) return fail(why, "the program lacks a map", 0);
  return true;
}

}  // namespace

bool fail(std::string& why, const char* what, int err) {
  why = what;
  if (err > 0) why += std::string(": ") + strerror(err);
  return false;
}

void TreeWatchFds::close_all() {
  for (int* fd : {&counters, &ring, &tasks}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  for (int fd : programs) close(fd);
  for (int fd : links) close(fd);
  programs.clear();
  links.clear();
}

bool load_tree_watch(pid_t owner, TreeWatchFds& out, std::string& why) {
  libbpf_set_print(quiet_print);
  LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "vtime_tree");
  bpf_object* obj = bpf_object__open_mem(kTreeWatchBpf, sizeof kTreeWatchBpf, &opts);
  if (!obj) return fail(why, "cannot open the program", errno);
  std::vector<bpf_link*> links;
  bool ok = [&] {
    if (!set_owner(obj, owner)) return fail(why, "the program lacks its owner", 0);
    if (int e = bpf_object__load(obj); e != 0) return fail(why, "the kernel refused the program", -e);
    bpf_program* prog;
    bpf_object__for_each_program(prog, obj) {
      bpf_link* l = bpf_program__attach(prog);
      if (!l) return fail(why, (std::string("cannot attach ") + bpf_program__name(prog)).c_str(), errno);
      links.push_back(l);
      out.programs.push_back(keep(bpf_program__fd(prog)));
      out.links.push_back(keep(bpf_link__fd(l)));
    }
    return take_maps(obj, out, why);
  }();
  // Our duplicates keep the links and maps alive: libbpf's own descriptors go.
  for (bpf_link* l : links) bpf_link__destroy(l);
  bpf_object__close(obj);
  if (!ok) out.close_all();
  return ok;
}

bool send_tree_watch(int sock, const TreeWatchFds& fds, const std::string& error) {
  Header h{};
  h.magic = kMagic;
  snprintf(h.error, sizeof h.error, "%s", error.c_str());
  std::vector<int> all;
  if (error.empty()) {
    h.counters_size = fds.counters_size;
    h.ring_size = fds.ring_size;
    h.programs = static_cast<uint32_t>(fds.programs.size());
    h.links = static_cast<uint32_t>(fds.links.size());
    all = {fds.counters, fds.ring, fds.tasks};
    all.insert(all.end(), fds.programs.begin(), fds.programs.end());
    all.insert(all.end(), fds.links.begin(), fds.links.end());
    if (all.size() > kMaxFds) return false;
  }
  iovec iov{&h, sizeof h};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(kMaxFds * sizeof(int))] = {};
  if (!all.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(all.size() * sizeof(int));
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(all.size() * sizeof(int));
    memcpy(CMSG_DATA(c), all.data(), all.size() * sizeof(int));
  }
  return sendmsg(sock, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof h);
}

bool receive_tree_watch(int sock, int timeout_ms, TreeWatchFds& out, std::string& why) {
  pollfd p{sock, POLLIN, 0};
  int r;
  do {
    r = poll(&p, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return fail(why, "the helper did not answer", 0);
  Header h{};
  iovec iov{&h, sizeof h};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(kMaxFds * sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  std::vector<int> got;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); n > 0 && c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    const int* v = reinterpret_cast<const int*>(CMSG_DATA(c));
    got.insert(got.end(), v, v + k);
  }
  auto refuse = [&](const std::string& what) {
    for (int fd : got) close(fd);
    why = what;
    return false;
  };
  if (n <= 0) return refuse("the helper exited without an answer");
  if (n != static_cast<ssize_t>(sizeof h) || h.magic != kMagic) return refuse("the helper's answer is not this vtime's");
  h.error[sizeof h.error - 1] = 0;
  if (h.error[0]) return refuse(h.error);
  if ((msg.msg_flags & MSG_CTRUNC) || got.size() != 3 + size_t{h.programs} + h.links || h.links == 0) {
    return refuse("the helper's answer lacks descriptors");
  }
  out.counters = got[0];
  out.ring = got[1];
  out.tasks = got[2];
  out.counters_size = h.counters_size;
  out.ring_size = h.ring_size;
  out.programs.assign(got.begin() + 3, got.begin() + 3 + h.programs);
  out.links.assign(got.begin() + 3 + h.programs, got.end());
  return true;
}

}  // namespace vtime::detail
