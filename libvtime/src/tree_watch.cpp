// Loading and reading the tree watch's eBPF program (see vtime/tree_watch.h and
// libvtime/bpf/tree_watch.bpf.c, whose rules this file does not repeat).
#include <vtime/tree_watch.h>

#include <vtime/log.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#ifdef VTIME_HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <vector>

// The compiled program (libvtime/bpf/tree_watch.bpf.c), embedded by the build.
#include "tree_watch_bpf.inc"
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
};

int quiet_print(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (level != LIBBPF_WARN) return 0;
  char line[512];
  vsnprintf(line, sizeof line, fmt, args);
  size_t n = strlen(line);
  if (n > 0 && line[n - 1] == '\n') line[n - 1] = 0;
  VTIME_LOGF("tree_watch", LogLevel::kDebug, "libbpf: %s", line);
  return 0;
}

int drain(void*, void*, size_t) { return 0; }

}  // namespace

struct TreeWatch::Impl {
  bpf_object* obj = nullptr;
  std::vector<bpf_link*> links;
  ring_buffer* ring = nullptr;
  int ring_epoll = -1;
  int tasks_fd = -1;
  TreeCounters* counters = nullptr;
  size_t counters_size = 0;

  ~Impl() {
    if (ring) ring_buffer__free(ring);
    for (bpf_link* l : links) bpf_link__destroy(l);
    if (counters) munmap(counters, counters_size);
    if (obj) bpf_object__close(obj);
  }

  // Loads and attaches; on failure returns false with a reason.
  bool load(std::string* why) {
    libbpf_set_print(quiet_print);
    LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "vtime_tree");
    obj = bpf_object__open_mem(kTreeWatchBpf, sizeof kTreeWatchBpf, &opts);
    if (!obj) return fail(why, "cannot open the program", errno);
    if (int e = bpf_object__load(obj); e != 0) return fail(why, "the kernel refused the program", -e);
    bpf_program* prog;
    bpf_object__for_each_program(prog, obj) {
      bpf_link* l = bpf_program__attach(prog);
      if (!l) return fail(why, (std::string("cannot attach ") + bpf_program__name(prog)).c_str(), errno);
      links.push_back(l);
    }
    bpf_map* map;
    bpf_object__for_each_map(map, obj) {
      const char* name = bpf_map__name(map);
      size_t n = strlen(name);
      if (bpf_map__is_internal(map) && n >= 4 && strcmp(name + n - 4, ".bss") == 0) {
        counters_size = bpf_map__value_size(map);
        if (counters_size < sizeof(TreeCounters)) return fail(why, "unexpected counter layout", 0);
        void* m = mmap(nullptr, counters_size, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
        if (m == MAP_FAILED) return fail(why, "cannot map the counters", errno);
        counters = static_cast<TreeCounters*>(m);
      } else if (strcmp(name, "tree_tasks") == 0) {
        tasks_fd = bpf_map__fd(map);
      } else if (strcmp(name, "idle_ring") == 0) {
        ring = ring_buffer__new(bpf_map__fd(map), drain, nullptr, nullptr);
        if (!ring) return fail(why, "cannot open the ring buffer", errno);
        ring_epoll = ring_buffer__epoll_fd(ring);
      }
    }
    if (!counters || tasks_fd < 0 || !ring) return fail(why, "the program lacks a map", 0);
    return true;
  }

  static bool fail(std::string* why, const char* what, int err) {
    if (why) {
      *why = what;
      if (err > 0) *why += std::string(": ") + strerror(err);
    }
    return false;
  }

  template <typename T>
  T load_field(T* f) const {
    return __atomic_load_n(f, __ATOMIC_ACQUIRE);
  }
};

std::unique_ptr<TreeWatch> TreeWatch::open(std::string* why) {
  IdleMode mode = idle_mode();
  if (mode == IdleMode::kProc) {
    if (why) *why = "VTIME_IDLE=proc";
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  std::string reason;
  if (!impl->load(&reason)) {
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

bool TreeWatch::wait_quiet(long timeout_us) {
  epoll_event ev;
  timespec ts{timeout_us / 1000000, (timeout_us % 1000000) * 1000};
  int n = epoll_pwait2(impl_->ring_epoll, &ev, 1, &ts, nullptr);
  ring_buffer__consume(impl_->ring);
  return n > 0;
}

void TreeWatch::wake_on(int fd, bool on) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  epoll_ctl(impl_->ring_epoll, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, &ev);
}

bool TreeWatch::watches(pid_t pid) const {
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return false;
  uint32_t v = 0;
  bool found = bpf_map_lookup_elem(impl_->tasks_fd, &fd, &v) == 0;
  close(fd);
  return found && (v & 1u) != 0;
}

uint64_t TreeWatch::misses() const {
  uint64_t n = 0;
  bpf_program* prog;
  bpf_object__for_each_program(prog, impl_->obj) {
    bpf_prog_info info{};
    uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0) n += info.recursion_misses;
  }
  return n;
}

#else  // built without libbpf or a BPF compiler

struct TreeWatch::Impl {};

std::unique_ptr<TreeWatch> TreeWatch::open(std::string* why) {
  if (idle_mode() == IdleMode::kKernel) throw std::runtime_error("VTIME_IDLE=kernel: vtime was built without libbpf");
  if (why) *why = "built without libbpf";
  return nullptr;
}
void TreeWatch::adopt_next_fork() {}
pid_t TreeWatch::root() const { return 0; }
TreeWatch::Counts TreeWatch::counts() const { return {}; }
bool TreeWatch::wait_quiet(long) { return false; }
void TreeWatch::wake_on(int, bool) {}
bool TreeWatch::watches(pid_t) const { return false; }
uint64_t TreeWatch::misses() const { return 0; }

#endif

std::unique_ptr<TreeWatch> TreeWatch::open_or_say() {
  std::string why;
  std::unique_ptr<TreeWatch> w = open(&why);
  if (!w && idle_mode() != IdleMode::kProc) {
    fprintf(stderr, "vtime: idle decisions read /proc, several times slower per advance: the kernel's count of the "
                    "tree's threads cannot be loaded here (%s; docs/install.md \"Without root\")\n", why.c_str());
  }
  return w;
}

TreeWatch::TreeWatch(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TreeWatch::~TreeWatch() = default;

}  // namespace vtime
