// Loading and reading the tree watch's eBPF program (see vtime/tree_watch.h and
// libvtime/bpf/tree_watch.bpf.c, whose rules this file does not repeat).
#include <vtime/tree_watch.h>

#include <vtime/log.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#ifdef VTIME_HAVE_BPF
#include "caps.h"
#include "tree_watch_load.h"

#include <bpf/bpf.h>

#include <spawn.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <iterator>
#include <vector>
#endif

namespace vtime {

namespace {

// VTIME_IDLE: "proc" never loads the program, "kernel" requires it, anything else tries it.
enum class IdleMode { kAuto, kProc, kKernel };

IdleMode idle_mode() {
  const char* v = getenv("VTIME_IDLE");
  if (!v || !*v || strcmp(v, "auto") == 0) return IdleMode::kAuto;
  if (strcmp(v, "proc") == 0) return IdleMode::kProc;
  if (strcmp(v, "kernel") == 0) return IdleMode::kKernel;
  VTIME_LOGF("tree_watch", LogLevel::kWarn, "VTIME_IDLE=%s is not proc, kernel or auto: using auto", v);
  return IdleMode::kAuto;
}

}  // namespace

#ifdef VTIME_HAVE_BPF

namespace {

// Mirrors struct tree_counters of the program.
struct TreeCounters {
  uint64_t active;
  uint64_t generation;
  uint64_t exits;
  uint32_t armed_tid;
  int32_t root_pid;
  uint32_t lost;
  uint32_t pad;
  struct Exited {
    uint64_t seq;
    uint32_t tid;
    uint32_t tgid;
    uint32_t process;
    uint32_t pad;
  } exited[64];
};

using detail::fail;

// The helper (tree_watch_load.h) run with the socket as its descriptor 3 and nothing of our
// environment; its answer, then its exit, awaited.
bool load_through_helper(const std::string& helper, detail::TreeWatchFds& fds, std::string& why) {
  if (helper.empty() || access(helper.c_str(), X_OK) != 0) {
    return fail(why, ("no CAP_BPF and CAP_PERFMON, and no " + std::string(detail::kTreeWatchHelper) +
                      (helper.empty() ? std::string() : " at " + helper)).c_str(), 0);
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return fail(why, "socketpair", errno);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
  char* argv[] = {const_cast<char*>(helper.c_str()), nullptr};
  char* envp[] = {nullptr};
  pid_t pid = -1;
  int e = posix_spawn(&pid, helper.c_str(), &fa, nullptr, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  close(sv[1]);
  if (e != 0) {
    close(sv[0]);
    return fail(why, ("cannot start " + helper).c_str(), e);
  }
  std::string reason;
  bool ok = detail::receive_tree_watch(sv[0], 10000, fds, reason);
  close(sv[0]);
  if (!ok) kill(pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return ok || fail(why, (helper + ": " + reason).c_str(), 0);
}

// The task map's word for process `pid` (a pidfd is its key); false with errno set otherwise
// (ENOENT: not in the tree; EPERM: a kernel before 6.5 refusing bpf() without CAP_BPF).
bool task_word(int tasks, pid_t pid, uint32_t& v) {
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return false;
  bool found = bpf_map_lookup_elem(tasks, &fd, &v) == 0;
  int e = errno;
  close(fd);
  errno = e;
  return found;
}

// Whether bpf() reads the task map for us: kernels before 6.5 refuse every bpf() call to a
// process without CAP_BPF, even on a descriptor it holds (the lookup of ourselves finds nothing).
bool tasks_readable(int tasks) {
  uint32_t v = 0;
  return task_word(tasks, getpid(), v) || errno == ENOENT;
}

}  // namespace

// Everything below reads the program through descriptors, whoever loaded it: the counters and
// the ring through mappings of our own, the task map through bpf() (watches() only).
struct TreeWatch::Impl {
  detail::TreeWatchFds fds;
  TreeCounters* counters = nullptr;
  size_t counters_size = 0;
  // The ring: its consumer page (ours to write) and its producer page with the data after it,
  // mapped twice in a row by the kernel so that a record never wraps.
  std::atomic<unsigned long>* ring_consumer = nullptr;
  char* ring_producer = nullptr;
  size_t ring_producer_size = 0;
  int ring_epoll = -1;

  const char* ring_data = nullptr;  // the records: one page into ring_producer
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));

  ~Impl() {
    if (counters) munmap(counters, counters_size);
    if (ring_consumer) munmap(ring_consumer, page);
    if (ring_producer) munmap(ring_producer, ring_producer_size);
    if (ring_epoll >= 0) close(ring_epoll);
    fds.close_all();
  }

  bool map(std::string& why) {
    counters_size = fds.counters_size;
    if (counters_size < sizeof(TreeCounters)) return fail(why, "unexpected counter layout", 0);
    void* m = mmap(nullptr, counters_size, PROT_READ | PROT_WRITE, MAP_SHARED, fds.counters, 0);
    if (m == MAP_FAILED) return fail(why, "cannot map the counters", errno);
    counters = static_cast<TreeCounters*>(m);
    if (fds.ring_size == 0 || (fds.ring_size & (fds.ring_size - 1)) != 0) return fail(why, "unexpected ring size", 0);
    m = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, fds.ring, 0);
    if (m == MAP_FAILED) return fail(why, "cannot map the ring's consumer page", errno);
    ring_consumer = static_cast<std::atomic<unsigned long>*>(m);
    ring_producer_size = page + 2 * size_t{fds.ring_size};
    m = mmap(nullptr, ring_producer_size, PROT_READ, MAP_SHARED, fds.ring, static_cast<off_t>(page));
    if (m == MAP_FAILED) return fail(why, "cannot map the ring", errno);
    ring_producer = static_cast<char*>(m);
    ring_data = ring_producer + page;
    ring_epoll = epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fds.ring;
    if (ring_epoll < 0 || epoll_ctl(ring_epoll, EPOLL_CTL_ADD, fds.ring, &ev) != 0) return fail(why, "epoll on the ring", errno);
    return true;
  }

  // Consumes every committed record (their content is not needed: each only says "active
  // dropped to zero"). A record still being written stops the walk; its commit then wakes us,
  // since the kernel wakes the consumer when it commits the record the consumer has reached.
  void consume() {
    constexpr uint32_t kBusy = 1u << 31, kDiscard = 1u << 30, kHeader = 8;
    auto* producer = reinterpret_cast<std::atomic<unsigned long>*>(ring_producer);
    unsigned long cons = ring_consumer->load(std::memory_order_acquire);
    unsigned long prod = producer->load(std::memory_order_acquire);
    const unsigned long mask = fds.ring_size - 1;
    while (cons < prod) {
      auto* len = reinterpret_cast<const std::atomic<uint32_t>*>(ring_data + (cons & mask));
      uint32_t l = len->load(std::memory_order_acquire);
      if (l & kBusy) break;
      cons += ((l & ~(kBusy | kDiscard)) + kHeader + 7) & ~7ul;
    }
    ring_consumer->store(cons, std::memory_order_release);
  }

  template <typename T>
  T load_field(T* f) const {
    return __atomic_load_n(f, __ATOMIC_ACQUIRE);
  }
};

std::unique_ptr<TreeWatch> TreeWatch::open(std::string* why, const std::string& helper_dir) {
  IdleMode mode = idle_mode();
  if (mode == IdleMode::kProc) {
    if (why) *why = "VTIME_IDLE=proc";
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  std::string reason;
  bool loaded;
  if (detail::has_capability(0, CAP_BPF) && detail::has_capability(0, CAP_PERFMON)) {
    loaded = detail::load_tree_watch(getpid(), impl->fds, reason);
  } else {
    const char* env = getenv("VTIME_TREEWATCH");
    std::string helper = env && *env ? env : helper_dir.empty() ? "" : helper_dir + "/" + detail::kTreeWatchHelper;
    loaded = load_through_helper(helper, impl->fds, reason);
  }
  loaded = loaded && impl->map(reason);
  if (loaded && !tasks_readable(impl->fds.tasks)) {
    loaded = fail(reason, "this kernel refuses map reads to unprivileged users (Linux before 6.5)", 0);
  }
  if (!loaded) {
    if (mode == IdleMode::kKernel) throw std::runtime_error("VTIME_IDLE=kernel: " + reason);
    VTIME_LOGF("tree_watch", LogLevel::kInfo, "kernel count unavailable (%s): idle decisions read /proc", reason.c_str());
    if (why) *why = reason;
    return nullptr;
  }
  return std::unique_ptr<TreeWatch>(new TreeWatch(std::move(impl)));
}

void TreeWatch::adopt_next_fork() {
  __atomic_store_n(&impl_->counters->armed_tid, static_cast<uint32_t>(syscall(SYS_gettid)), __ATOMIC_SEQ_CST);
}

pid_t TreeWatch::root() const { return impl_->load_field(&impl_->counters->root_pid); }

TreeWatch::Counts TreeWatch::counts() const {
  Counts c;
  TreeCounters* k = impl_->counters;
  c.generation = impl_->load_field(&k->generation);
  c.active = impl_->load_field(&k->active);
  c.exits = impl_->load_field(&k->exits);
  c.complete = impl_->load_field(&k->lost) == 0;
  return c;
}

bool TreeWatch::exited(uint64_t from, uint64_t to, std::vector<pid_t>& threads, std::vector<pid_t>& processes) const {
  threads.clear();
  processes.clear();
  constexpr uint64_t kRing = std::size(TreeCounters{}.exited);
  if (to < from || to - from > kRing) return false;
  for (uint64_t i = from; i < to; ++i) {
    TreeCounters::Exited* e = &impl_->counters->exited[i % kRing];
    uint64_t seq = impl_->load_field(&e->seq);
    uint32_t tid = impl_->load_field(&e->tid);
    uint32_t tgid = impl_->load_field(&e->tgid);
    uint32_t process = impl_->load_field(&e->process);
    if (seq != i + 1 || impl_->load_field(&e->seq) != seq) return false;
    threads.push_back(static_cast<pid_t>(tid));
    if (process != 0 && std::find(processes.begin(), processes.end(), static_cast<pid_t>(tgid)) == processes.end()) {
      processes.push_back(static_cast<pid_t>(tgid));
    }
  }
  return true;
}

bool TreeWatch::wait_quiet(long timeout_us) {
  epoll_event ev;
  timespec ts{timeout_us / 1000000, (timeout_us % 1000000) * 1000};
  int n = epoll_pwait2(impl_->ring_epoll, &ev, 1, &ts, nullptr);
  impl_->consume();
  return n > 0;
}

void TreeWatch::wake_on(int fd, bool on) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  epoll_ctl(impl_->ring_epoll, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, &ev);
}

bool TreeWatch::watches(pid_t pid) const {
  uint32_t v = 0;
  return task_word(impl_->fds.tasks, pid, v) && (v & 1u) != 0;
}

uint64_t TreeWatch::misses() const {
  uint64_t n = 0;
  for (int fd : impl_->fds.programs) {
    bpf_prog_info info{};
    uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) n += info.recursion_misses;
  }
  return n;
}

#else  // built without libbpf or a BPF compiler

struct TreeWatch::Impl {};

std::unique_ptr<TreeWatch> TreeWatch::open(std::string* why, const std::string&) {
  if (idle_mode() == IdleMode::kKernel) throw std::runtime_error("VTIME_IDLE=kernel: vtime was built without libbpf");
  if (why) *why = "built without libbpf";
  return nullptr;
}
void TreeWatch::adopt_next_fork() {}
pid_t TreeWatch::root() const { return 0; }
TreeWatch::Counts TreeWatch::counts() const { return {}; }
bool TreeWatch::exited(uint64_t, uint64_t, std::vector<pid_t>&, std::vector<pid_t>&) const { return false; }
bool TreeWatch::wait_quiet(long) { return false; }
void TreeWatch::wake_on(int, bool) {}
bool TreeWatch::watches(pid_t) const { return false; }
uint64_t TreeWatch::misses() const { return 0; }

#endif

std::unique_ptr<TreeWatch> TreeWatch::open_or_say(const std::string& helper_dir) {
  std::string why;
  std::unique_ptr<TreeWatch> w = open(&why, helper_dir);
  if (!w && idle_mode() != IdleMode::kProc) {
    fprintf(stderr, "vtime: idle decisions read /proc, several times slower per advance: the kernel's count of the "
                    "tree's threads cannot be loaded here (%s; docs/install.md \"Without root\")\n", why.c_str());
  }
  return w;
}

TreeWatch::TreeWatch(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TreeWatch::~TreeWatch() = default;

}  // namespace vtime
