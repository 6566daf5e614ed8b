// Session creation (owner) and attachment (wrapped processes) with Boost.Interprocess.
#include <vtime/session.h>

#include "libc.h"
#include "tsc_clock.h"

#include <boost/interprocess/file_mapping.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <new>
#include <random>
#include <string>

namespace bip = boost::interprocess;

namespace vtime {

int64_t real_monotonic_ns() {
  timespec ts{};
  // Through the real-libc table: inside the shim, ::clock_gettime is our own virtual one.
  detail::libc().clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

TimePoint read_running_clock(const abi::ClockState& c) {
  for (;;) {
    uint64_t s1 = c.seq.load(std::memory_order_acquire);
    int64_t base = c.now_ns.load(std::memory_order_acquire);
    int64_t rate = c.rate_ppm.load(std::memory_order_acquire);
    uint64_t mult = c.tsc_mult.load(std::memory_order_acquire);
    uint64_t tsc_base = c.tsc_base.load(std::memory_order_acquire);
    int64_t real_base = c.real_base_ns.load(std::memory_order_acquire);
    // The real time is taken before seq is checked again (see abi::ClockState).
    uint64_t tsc = 0;
    int64_t real = 0;
    if (mult != 0) {
      tsc = detail::read_tsc();
    } else if (rate != 0) {
      real = real_monotonic_ns();
    }
    if ((s1 & 1) != 0 || c.seq.load(std::memory_order_acquire) != s1) continue;
    if (rate == 0) return TimePoint::from_ns(base);  // stopped meanwhile
    if (mult != 0) return TimePoint::from_ns(base + detail::tsc_elapsed(tsc, tsc_base, mult));
    if (rate == 1000000) return TimePoint::from_ns(base + (real - real_base));  // no 128-bit division
    __extension__ typedef __int128 wide;  // elapsed * rate overflows 64 bits after ~2.5 hours
    return TimePoint::from_ns(base + static_cast<int64_t>(static_cast<wide>(real - real_base) * rate / 1000000));
  }
}

struct Session::Impl {
  bool owner = false;
  bip::shared_memory_object shm;  // owner only: keeps the (unlinked) segment's fd open
  bip::mapped_region region;

  ~Impl() {
    // The session ends with its owner's orderly exit: so does its tracer, now, rather than when
    // its parent-death signal says so (then it first waits for every thread of the owner to be
    // gone, and lingers for a moment after it). Its tree is already ended by then.
    if (!owner || region.get_address() == nullptr) return;
    auto* seg = static_cast<abi::Segment*>(region.get_address());
    pid_t tracer = seg->header.tracer_pid.load(std::memory_order_acquire);
    if (tracer > 0 && ::kill(tracer, SIGKILL) == 0) {
      while (::waitpid(tracer, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  seg_ = static_cast<abi::Segment*>(impl_->region.get_address());
}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

bool Session::is_owner() const { return impl_->owner; }

std::string Session::attach_spec() const {
  if (!impl_->owner) throw SessionError("only the session owner has an attach spec");
  return "/proc/" + std::to_string(seg_->header.owner_pid) + "/fd/" +
         std::to_string(impl_->shm.get_mapping_handle().handle);
}

static std::string random_name() {
  std::random_device rd;
  std::uniform_int_distribution<uint64_t> dist;
  char buf[64];
  snprintf(buf, sizeof buf, "vtime.%d.%016llx", static_cast<int>(getpid()),
           static_cast<unsigned long long>(dist(rd)));
  return buf;
}

Session Session::create(const SessionOptions& opts) {
  auto impl = std::make_unique<Impl>();
  impl->owner = true;
  std::string name;
  for (int attempt = 0;; ++attempt) {
    name = random_name();
    try {
      bip::permissions perm;
      perm.set_permissions(0600);
      // create_only is O_CREAT|O_EXCL: never reuse somebody else's segment.
      impl->shm = bip::shared_memory_object(bip::create_only, name.c_str(), bip::read_write, perm);
      break;
    } catch (const bip::interprocess_exception& e) {
      if (attempt >= 8) throw SessionError(std::string("cannot create the session segment: ") + e.what());
    }
  }
  try {
    impl->shm.truncate(sizeof(abi::Segment));
    impl->region = bip::mapped_region(impl->shm, bip::read_write);
  } catch (const bip::interprocess_exception& e) {
    bip::shared_memory_object::remove(name.c_str());
    throw SessionError(std::string("cannot map the session segment: ") + e.what());
  }
  // Unlink at once: the children reach the segment through /proc/OWNER/fd/N, so a crash of the
  // owner cannot leave a stale segment in /dev/shm.
  bip::shared_memory_object::remove(name.c_str());
  int fd = impl->shm.get_mapping_handle().handle;
  fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);

  void* addr = impl->region.get_address();
  std::memset(addr, 0, sizeof(abi::Segment));
  auto* seg = new (addr) abi::Segment;  // zero-initialised atomics are valid empty slots
  abi::Header& h = seg->header;
  h.version = abi::kVersion;
  h.header_size = sizeof(abi::Header);
  h.total_size = sizeof(abi::Segment);
  h.owner_pid = getpid();
  h.waiter_count = abi::kWaiterSlots;
  h.process_count = abi::kProcessSlots;
  h.waiter_offset = offsetof(abi::Segment, waiters);
  h.process_offset = offsetof(abi::Segment, processes);
  h.thread_stat_offset = offsetof(abi::Segment, thread_stats);
  h.thread_stat_count = abi::kThreadStatSlots;
  h.clock.epoch_ns = opts.epoch_ns;
  h.clock.mono_origin_ns = opts.mono_origin_ns;
  h.cpu_model.store(opts.cpu_model, std::memory_order_relaxed);
  h.cpu_cost_ns.store(opts.cpu_cost_ns, std::memory_order_relaxed);
  h.cpu_quantum_ns.store(std::max(opts.cpu_quantum_ns, opts.cpu_cost_ns), std::memory_order_relaxed);
  h.cpu_burst_calls.store(std::max<int64_t>(0, opts.cpu_burst_calls), std::memory_order_relaxed);
  h.sleep_latency_ns.store(std::max<int64_t>(0, opts.sleep_latency_ns), std::memory_order_relaxed);
  h.timer_slack_ns.store(std::max<int64_t>(0, opts.timer_slack_ns), std::memory_order_relaxed);
  for (auto& p : seg->processes) p.state.store(abi::kProcessFree);
  for (auto& w : seg->waiters) w.state.store(abi::kFree);
  // The magic goes last: a reader that sees it sees a complete header.
  __atomic_store_n(&h.magic, abi::kMagic, __ATOMIC_RELEASE);
  return Session(std::move(impl));
}

Session Session::attach(std::string_view spec) {
  if (spec.empty()) throw SessionError("VTIME_SESSION is empty");
  std::string path(spec);
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    throw SessionError("cannot open session '" + path + "': " + std::strerror(errno) +
                       " (is the vtime process that created it still running?)");
  }
  if (static_cast<uint64_t>(st.st_size) < sizeof(abi::Header)) {
    throw SessionError("session '" + path + "' is too small to be a vtime segment (" +
                       std::to_string(st.st_size) + " bytes)");
  }
  auto impl = std::make_unique<Impl>();
  try {
    bip::file_mapping fm(path.c_str(), bip::read_write);
    impl->region = bip::mapped_region(fm, bip::read_write);
  } catch (const bip::interprocess_exception& e) {
    throw SessionError("cannot map session '" + path + "': " + e.what());
  }
  const auto* h = static_cast<const abi::Header*>(impl->region.get_address());
  if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != abi::kMagic) {
    throw SessionError("session '" + path + "' is not a vtime segment (bad magic)");
  }
  if (h->version != abi::kVersion) {
    throw SessionError("session '" + path + "' has ABI version " + std::to_string(h->version) +
                       ", this library speaks version " + std::to_string(abi::kVersion));
  }
  if (h->total_size != sizeof(abi::Segment) || impl->region.get_size() < sizeof(abi::Segment) ||
      h->header_size != sizeof(abi::Header) || h->waiter_count != abi::kWaiterSlots ||
      h->process_count != abi::kProcessSlots || h->thread_stat_count != abi::kThreadStatSlots) {
    throw SessionError("session '" + path + "' has an unexpected layout (size " +
                       std::to_string(h->total_size) + ", expected " + std::to_string(sizeof(abi::Segment)) + ")");
  }
  return Session(std::move(impl));
}

}  // namespace vtime
