// The shared-memory ABI between every side of a vtime session.
//
// What it is for: one segment per session holds the virtual clock, the table of pending timed
// waits (waiter slots) and the table of processes of the wrapped tree. The controller (`vtime
// exec`, the broker) writes the clock and wakes slots; every wrapped process reads the clock
// with plain atomic loads and registers its waits here. Everything is standard-layout, lock-free
// atomics and offsets, never pointers, so any process can map it at any address. The magic,
// the ABI version and the total size are checked on attach; bump kVersion on any layout change.
//
// Slot life cycle (thread slots): Free -> Claimed (owned by a thread, not waiting)
//   -> Waiting (deadline set) -> Woken (by the controller at the deadline) -> Claimed.
// Timer slots (owned by a process): Claimed (disarmed) <-> Waiting (armed) -> Woken (firing).
// A Woken slot is a wake-up the owner has not consumed yet: the tree is not idle while one exists.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace vtime::abi {

inline constexpr uint64_t kMagic = 0x31454d4954565f56ULL;  // "V_VTIME1", little-endian
inline constexpr uint32_t kVersion = 24;  // 24: WaiterSlot::early_ns; 23: timer_slack_ns; 22: cpu_burst_calls; 21: sleep_latency_ns; 20: tsc_*_images; 19: process_high; 18: notified sleeps; 17: kWaking; 16: kTracerDirect; 15: tracer_awake; 14: tracer_reaps; 13: kAgentRetry; 12: thread turns over every futex wait; 11: process rank, thread turns; 10: serialised processes; 9: the TSC-read running clock (8: the tracer; 7: clock sets, CPU-time model)
inline constexpr uint32_t kWaiterSlots = 4096;
inline constexpr uint32_t kProcessSlots = 512;
inline constexpr uint32_t kThreadStatSlots = 4096;
inline constexpr int64_t kNoDeadline = std::numeric_limits<int64_t>::max();
inline constexpr uint32_t kNoProcess = 0xffffffffu;

// Waking is the controller's alone: it marks a Waiting slot Waking, checks that the slot still
// holds the wait it found due (its seq, a deadline reached), and only then makes it Woken (or
// Claimed: a direct sleep it woke itself), else Waiting again; both with a compare-exchange from
// Waking. An advance that
// does not wait for the tree to be idle (the timeout policy, a running clock) races the owners:
// one may end the due wait by itself and arm its next on the same slot between the advance's look
// at the table and its wake-up. Marking that next wait Woken, even for an instant, would end it
// before its deadline; an owner that finds its slot Waking waits the few instructions until the
// controller is done (settle_waking) before it changes the slot by a compare-exchange, and a
// plain store of the owner over Waking (a wait ended or re-armed) makes the controller's step fail.
enum SlotState : uint32_t { kFree = 0, kClaimed = 1, kWaiting = 2, kWoken = 3, kWaking = 4 };

// Who makes the owner run when the deadline comes.
enum WakeKind : uint32_t {
  kWakeFutex = 0,  // the controller bumps `word` and futex-wakes it (sleeps)
  kWakeAgent = 1,  // the controller wakes the owning process's agent thread, which acts in-process
  kWakeNone = 2,   // an infinite wait, recorded for the deadlock report only
  // A raw system call of a traced process (static executables, Go programs: docs/tracer.md): the
  // controller signals the tracer, which interrupts the call and makes it return its timeout.
  kWakeTracer = 3,
};

// What a slot waits for (the deadlock report prints these).
enum Reason : uint32_t {
  kReasonNone = 0, kReasonSleep, kReasonPoll, kReasonSelect, kReasonEpoll, kReasonCond,
  kReasonSem, kReasonMutex, kReasonRwlock, kReasonFutex, kReasonJoin, kReasonSigwait,
  kReasonPosixTimer, kReasonTimerfd, kReasonAlarm, kReasonCpu, kReasonCount
};

// How computation is charged in virtual time (docs/design.md, "CPU-time model").
enum CpuModel : uint32_t {
  kCpuZero = 0,   // computation takes no virtual time
  kCpuCalls = 1,  // each clock read and non-blocking call costs cpu_cost_ns, paid as a sleep
  kCpuReal = 2,   // the clock runs at cpu_scale x real time while the tree is busy
};

struct alignas(64) WaiterSlot {
  std::atomic<uint32_t> state;
  std::atomic<uint32_t> word;       // futex word for kWakeFutex
  std::atomic<int32_t> pid;
  std::atomic<int32_t> tid;
  std::atomic<int64_t> deadline;    // virtual ns since origin, kNoDeadline for infinite waits
  std::atomic<uint64_t> seq;        // registration order: ties at one deadline wake in this order
  std::atomic<uint32_t> wake_kind;
  std::atomic<uint32_t> reason;
  std::atomic<uint32_t> process;    // index into processes[]
  std::atomic<uint16_t> is_timer;   // 1: owned by the process (timer), 0: owned by thread `tid`
  // 1: the deadline is an absolute CLOCK_REALTIME time. A clock set moves such a deadline on the
  // virtual time line (Linux re-evaluates absolute realtime sleeps and timers the same way).
  std::atomic<uint16_t> realtime_abs;
  // The wait's timer slack as a range (docs/shim.md "Timer slack"): it may end at any advance
  // from `deadline - early_ns` on, and time stops for it at `deadline` (the kernel's soft and
  // hard expiry of a range timer). 0: exactly at `deadline`.
  std::atomic<uint32_t> early_ns;
  // kWakeTracer: kTracerExitTracked, kTracerHousekeeping, kTracerAnyThread. kWakeAgent:
  // kAgentRetry (cleared when the wait registers).
  std::atomic<uint32_t> tracer_flags;
  // The ClockState::realtime_shift_ns the deadline was computed with; whoever moves it from one
  // shift to another (a compare-exchange) applies the difference to the deadline, once.
  std::atomic<int64_t> shift_at;
};

// WaiterSlot::tracer_flags. Exit-tracked: the tracer follows the call to its end (a syscall-exit
// stop: forms that leave no argument for a tag, tracer/timed_call.h), so the controller does not
// look for the tag in /proc. Housekeeping: a wait of a language runtime's own (Go's sysmon and
// spinning threads sleep with nanosleep and timed futex waits; the program's timers go through
// epoll_pwait): whether one exists at a given instant depends on how the runtime's threads
// raced, so the controller never stops time at its deadline while anything else is pending (it
// is woken with the next advance past it), does not count it among the wake-ups an advance
// returns (no tick from the broker), and the recorder leaves it out.
inline constexpr uint32_t kTracerExitTracked = 1;
inline constexpr uint32_t kTracerHousekeeping = 2;
// Any thread: which of the process's threads waits is the language runtime's choice (Go's
// network poller runs on whichever thread looked for work last), so the recorder names the
// process only.
inline constexpr uint32_t kTracerAnyThread = 4;
// WaiterSlot::tracer_flags of a kWakeAgent slot: the controller woke it without knowing the tree
// idle (the timeout policy's steps, a clock running while the tree computes), so its thread may
// not have reached its blocking call yet. A condition broadcast or a futex wake made then is
// lost: the agent repeats such an action until the wait ends (agent.cpp). Never set when the
// tree was idle at the wake (every thread blocked): exact runs never repeat anything.
inline constexpr uint32_t kAgentRetry = 8;
// A kWakeTracer sleep (nanosleep, clock_nanosleep) the tracer rewrote into a futex wait on the
// slot's own `word` (tracer/timed_call.h, "direct sleeps"): at the deadline the controller wakes
// that word itself, and only if the thread was queued there (FUTEX_WAKE woke one task) does it end
// the wait (Woken -> Claimed) without the tracer. Otherwise it clears the flag and the tracer
// interrupts the call as for any other of its waits (the flag is cleared before the slot turns
// Woken: a Woken slot with the flag set is never seen). The tracer ends such a wait itself when a
// signal stops the thread in it (it follows the thread to its next call), so the controller
// never reads /proc for it.
inline constexpr uint32_t kTracerDirect = 16;
// A kWakeTracer sleep the controller answers itself (docs/tracer.md, "Notified sleeps"): a
// clock_nanosleep on a virtual clock, made by a traced image whose tracer added a filter that
// hands that call to the controller (SECCOMP_RET_USER_NOTIF). The thread waits in the kernel for
// the answer; the controller claims the slot when the notification comes, answers at the deadline
// (the call returns 0) and frees the slot. A signal that ends the wait in the kernel
// (-ERESTARTSYS) stops the thread for the tracer, which makes the call return EINTR if a handler
// runs, writes the time left, and follows the thread to its next call: the same call again (no
// handler ran: the kernel restarts it, the controller keeps the deadline) or another one (the
// tracer ends the slot).
inline constexpr uint32_t kTracerNotify = 32;
// A notified epoll wait whose events the controller took for it (libvtime/internal/vtime/internal/notify_sleeps.h):
// Answering while it takes and writes them, then Answered with their number in `deadline`; the
// slot stays Claimed until the thread's next notification. A signal that ends the wait before
// the kernel hands the answer over makes the kernel drop it: the tracer, at the signal's stop,
// waits out Answering and makes the call return that number (else EINTR), so no event is lost.
inline constexpr uint32_t kTracerAnswering = 64;
inline constexpr uint32_t kTracerAnswered = 128;

// The futex bitset a direct sleep of wait `seq` waits with (FUTEX_WAIT_BITSET), and the
// controller wakes: a wake-up meant for one wait never ends the next wait on the same slot.
inline constexpr uint32_t direct_bit(uint64_t seq) { return 1u << (seq % 32); }

// Requests to the tracer (tracer/): a thread about to execute a program the shim cannot reach
// asks to be traced. State: 0 free, 1 being filled, 2 asked, 3 attached, 4 refused.
struct alignas(64) TraceRequest {
  std::atomic<uint32_t> state;
  std::atomic<int32_t> tid;
  std::atomic<int32_t> error;       // errno of a refusal
  std::atomic<uint32_t> reserved;
};
inline constexpr uint32_t kTraceRequests = 16;
// The listener of a notify filter (kTracerNotify): the tracer installs the filter in a traced
// image at its exec stop, takes the listener's descriptor and publishes it here (kListenerHeld:
// `tracer_fd` is its number in the tracer) before the image runs an instruction, so the
// controller adopts it (pidfd_getfd) before any idle decision could miss a notification of it.
// The controller marks it closed once no process uses the filter any more; the tracer then frees
// the entry.
struct alignas(16) NotifyListener {
  std::atomic<uint32_t> state;
  std::atomic<int32_t> tracer_fd;
  std::atomic<int32_t> pid;  // the process that installed it
  std::atomic<uint32_t> reserved;
};
enum ListenerState : uint32_t {
  kListenerFree = 0, kListenerReserved = 1, kListenerHeld = 2, kListenerAdopted = 3, kListenerClosed = 4
};
inline constexpr uint32_t kNotifyListeners = 32;
// Processes that may have threads held by the serial gate at once (Header::serial_held).
inline constexpr uint32_t kSerialHeld = 64;
// Header::serial: one process at a time, or one thread at a time (vtime_serialize_threads: a
// traced program's futex waits stop too, a thread woken by another thread of its process is held
// until its turn, and new threads wait for theirs).
inline constexpr uint32_t kSerialProcesses = 1;
inline constexpr uint32_t kSerialThreads = 2;

// Tagged fd waits (libvtime/src/fd_wait.h): the real ppoll/epoll_pwait of an intercepted wait,
// with no signal mask, carries kTaggedWaitMark | the wait slot's seq in the (then ignored)
// mask-size argument, where the controller reads it in /proc/TID/syscall.
inline constexpr uint64_t kTaggedWaitMark = 0x5654ull << 48;

// ProcessSlot::state. A registration claims a free slot as kProcessFilling, writes the fields, then
// publishes it as kProcessLive: a reader never acts on a half-written slot (the controller counts
// a filling slot as a tree that is not idle yet). The controller frees the slot of a dead process.
enum ProcessState : uint32_t { kProcessFree = 0, kProcessLive = 1, kProcessFilling = 2 };

struct alignas(64) ProcessSlot {
  std::atomic<uint32_t> state;      // ProcessState
  std::atomic<int32_t> pid;
  std::atomic<int32_t> parent;
  std::atomic<uint32_t> agent_word; // futex the process's agent thread sleeps on
  std::atomic<uint64_t> start_time; // /proc/PID/stat field 22 (clock ticks since boot), 0 unknown
  // Clock reads of the process's threads that have exited (their ThreadStat folded in here).
  std::atomic<uint64_t> clock_reads;
  std::atomic<uint64_t> clock_digest;
  std::atomic<int32_t> agent_tid;   // the agent thread, 0 before it runs (the controller proves it idle)
  // The futex every sleeper of the process (a kWakeFutex wait) blocks on, with FUTEX_WAIT_BITSET
  // and the bit sleep_bit(its slot): a waker bumps it and wakes the bits of the slots it woke,
  // one system call per process; the controller counts the sleepers queued on it.
  std::atomic<uint32_t> sleep_word;
  // Where the process comes from, independent of pids: a hash of its parent's lineage and of its
  // rank among the parent's forks, given by the fork/posix_spawn wrappers (0: the root, and
  // children of glibc-internal clones, which no wrapper announces). Pids of processes forked at
  // one instant by different parents race; lineages do not, so the recorder names processes by
  // them.
  std::atomic<uint64_t> lineage;
  std::atomic<uint32_t> forks;      // children the process has forked or spawned so far
  // Threads of the process the serial gate holds (Header::serial; the shim's, in
  // libvtime/src/serial_gate.cpp; the tracer's are listed in Header::serial_held).
  std::atomic<uint16_t> held;
  // With the lineage, what orders processes where pids must not (whose turn comes first at one
  // instant, Controller's turn_of): the rank among the parent's forks, 1-based, 65535 for any
  // later one (the lineage then decides); 0: not announced (the root, glibc-internal clones).
  std::atomic<uint16_t> rank;
};

// splitmix64's output function: spreads every bit of z over the result.
inline constexpr uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
inline constexpr uint64_t kSplitmix64Gamma = 0x9e3779b97f4a7c15ULL;

// The lineage of the `rank`-th child (1-based) of a process of lineage `parent` (splitmix64).
inline constexpr uint64_t child_lineage(uint64_t parent, uint32_t rank) {
  return splitmix64_mix(parent ^ (kSplitmix64Gamma * (static_cast<uint64_t>(rank) + 1)));
}

inline constexpr uint32_t sleep_bit(uint32_t slot) { return 1u << (slot % 32); }

// Clock reads of one thread, for decision traces (docs/trace-format.md, `clock` records). Only
// the owning thread writes `reads` and `digest`, with plain relaxed stores: a clock read stays a
// handful of loads and stores, no locked instruction. The controller reads them when the tree is
// idle, when no owner is running. State: 0 free, 1 live, 2 being initialised.
struct alignas(64) ThreadStat {
  std::atomic<uint32_t> state;
  std::atomic<uint32_t> ignored;    // set by the controller: a thread whose reads are not counted
  std::atomic<int32_t> pid;
  std::atomic<int32_t> tid;
  std::atomic<uint32_t> process;    // index into processes[]
  std::atomic<uint32_t> reserved;
  std::atomic<uint64_t> reads;
  std::atomic<uint64_t> digest;     // FNV-1a over the 64-bit values read, in order
};
inline constexpr uint64_t kDigestBasis = 0xcbf29ce484222325ULL;
inline constexpr uint64_t kDigestPrime = 0x100000001b3ULL;

// The clock is a seqlock: the controller is the only writer; readers retry on an odd or changed
// seq. Frozen (rate 0, the default): now = now_ns. Running: now = now_ns + the real time elapsed
// since the write, times rate_ppm / 1e6, read from the CPU's time-stamp counter when tsc_mult is
// set (now_ns + max(0, tsc - tsc_base) * tsc_mult / 2^32: tsc_mult folds the rate and the
// counter's calibration against CLOCK_MONOTONIC), from CLOCK_MONOTONIC otherwise
// (real_now - real_base_ns). Readers take the real time inside the seqlock, and the writer takes
// its own after making seq odd: a read that passes its check never returns more than the value
// the next write starts from, so the clock never goes back when it stops.
struct alignas(64) ClockState {
  std::atomic<uint64_t> seq;
  std::atomic<int64_t> now_ns;
  std::atomic<int64_t> real_base_ns;   // CLOCK_MONOTONIC (real) when now_ns was set
  std::atomic<int64_t> rate_ppm;       // 0 frozen, 1'000'000 runs with the real clock
  int64_t epoch_ns;                    // CLOCK_REALTIME at virtual time 0 (before any set)
  int64_t mono_origin_ns;              // CLOCK_MONOTONIC/BOOTTIME at virtual time 0
  // What clock_settime & co. of the tree added to CLOCK_REALTIME (monotonic clocks never move):
  // realtime = epoch_ns + realtime_shift_ns + now. Outside the seqlock: sets are rare and a
  // reader racing with one sees the clock before or after it, as on Linux.
  std::atomic<int64_t> realtime_shift_ns;
  std::atomic<uint64_t> realtime_sets;  // how many sets so far (TFD_TIMER_CANCEL_ON_SET, the recorder)
  std::atomic<uint64_t> tsc_base;      // the time-stamp counter when now_ns was set (running clock)
  std::atomic<uint64_t> tsc_mult;      // virtual ns per counter tick, 32.32 fixed point; 0: use CLOCK_MONOTONIC
};

struct alignas(64) Header {
  uint64_t magic;
  uint32_t version;
  uint32_t header_size;
  uint64_t total_size;
  int32_t owner_pid;                   // the controller; waiters fail loudly once it is gone
  uint32_t waiter_count;
  uint32_t process_count;
  uint32_t reserved0;
  uint64_t waiter_offset;
  uint64_t process_offset;
  uint64_t thread_stat_offset;
  uint32_t thread_stat_count;
  // 1 while the tracer polls (it looks at the waiter table on its own), 0 while it sleeps or is
  // about to: the controller signals it (SIGUSR2) for due waits only then. The tracer clears it,
  // then looks at the table once more before sleeping; the controller marks slots Woken, then
  // reads it (both orders sequentially consistent): one of the two sees the other.
  std::atomic<uint32_t> tracer_awake;
  std::atomic<uint64_t> activity;      // bumped on every wait entry/exit and registration
  std::atomic<uint32_t> controller_word;
  std::atomic<uint32_t> controller_waiting;
  std::atomic<uint64_t> next_seq;
  std::atomic<uint64_t> advances;
  std::atomic<uint64_t> wakeups;
  // The CPU-time model of the session (CpuModel), fixed by the controller before the tree starts.
  std::atomic<uint32_t> cpu_model;
  // Waiter slots at or above this index have never been claimed: the controller and the agents
  // scan only below it. Raised before a slot is claimed, never lowered.
  std::atomic<uint32_t> waiter_high;
  // The same for process slots: the controller reads the process table on every idle decision,
  // and 512 slots of 64 bytes were most of a look's own time (a third of a microsecond per
  // notified sleep).
  std::atomic<uint32_t> process_high;
  // Bumped by vtime_request_tick(): a process of the tree learned something it must tell the
  // simulator at this instant, outside any exchange (a bridge to a real RJMS hearing that a job
  // started). The broker compares it with the value it saw at its last message to the scheduler,
  // and sends a tick at the next idle point of the same instant when it moved.
  std::atomic<uint32_t> tick_requests;
  // Set by vtime_ticks_on_request(): the scheduler asks for every tick it needs, so timers that
  // fire in its tree no longer earn it one (a bridge whose daemons' timers say nothing to it).
  std::atomic<uint32_t> ticks_on_request_only;
  // Odd while the tracer reaps a traced process that exited (its waitpid): inside that call the
  // kernel detaches the zombie (TracerPid 0) and only then wakes its parent, which waits for it;
  // a vCPU the hypervisor preempts between the two leaves a tree that looks idle with a wake-up
  // on its way. An idle decision needs the same even value before and after it (Controller).
  std::atomic<uint32_t> tracer_reaps;
  // kCpuCalls: the virtual cost of one charged call, and the debt at which a thread pays what it
  // owes by sleeping it (so time moves in steps of the quantum, not on every call).
  std::atomic<int64_t> cpu_cost_ns;
  std::atomic<int64_t> cpu_quantum_ns;
  // kCpuCalls: the charged calls a thread (a traced process) makes free at one virtual instant
  // before it counts as busy-waiting (vtime/cpu_model.h).
  std::atomic<int64_t> cpu_burst_calls;
  // How long after its deadline a sleep ends (nanosleep, clock_nanosleep, usleep, sleep): the
  // wake-up latency of a real kernel (timer slack, the scheduler), which makes a real loop of
  // sleeps drift; 0: exactly at the deadline (vtime run --sleep-latency, docs/shim.md).
  std::atomic<int64_t> sleep_latency_ns;
  // The timer slack of the wrapped programs' timed waits (vtime/internal/timer_slack.h): every
  // wait but a timer's ends this long after its deadline, fd waits by 0.1% of their timeout when
  // more; a sleep by sleep_latency_ns instead when that is set; 0: exact (--timer-slack).
  std::atomic<int64_t> timer_slack_ns;
  ClockState clock;
  // The tracer process (0: none started), and how many processes it has traced so far (the
  // controller then looks for traced zombies when the count saw an exit).
  std::atomic<int32_t> tracer_pid;
  std::atomic<uint32_t> traced;
  TraceRequest trace_requests[kTraceRequests];
  // One runnable process at a time (docs/design.md "Serialised processes"). With `serial` set,
  // a thread whose wait ends while its process is not `serial_active` does not return to its
  // program: it is held asleep on `serial_word` (a futex in the header's first page, which
  // every traced process maps). The tracer holds traced threads and lists them in
  // `serial_held` (pids) and `serial_held_tid` (their tids), by pid and, within a process, in
  // the order the process made its threads (0-terminated; only the tracer writes them, only
  // while a thread is stopped for it, so an idle look reads a settled list); a thread under
  // the shim holds itself and counts itself in its ProcessSlot::held. At an idle point the
  // controller hands the tree to the held process whose turn comes first (rank among its
  // parent's forks, then lineage: ProcessSlot; not pids, which wrap) and, for a traced one, to
  // its first held thread (`serial_thread`; serial_active, then a bump and wake of
  // serial_word): the tracer releases that thread only, and holds any other wait of the
  // process that ends meanwhile, so that the threads of a process woken at one instant run one
  // after another too. An advance hands the tree to the process whose deadline it reaches
  // (serial_thread 0: its waits that end run, its held threads wait for a hand-over); with
  // nothing held, no process is active (-1) and every wake-up is held until the next idle point.
  std::atomic<uint32_t> serial;
  std::atomic<int32_t> serial_active;
  std::atomic<uint32_t> serial_word;
  std::atomic<uint32_t> serial_handovers;  // statistics: how many hand-overs so far
  std::atomic<int32_t> serial_held[kSerialHeld];
  std::atomic<int32_t> serial_held_tid[kSerialHeld];
  std::atomic<int32_t> serial_thread;
  // 1: the tracer adds the notify filter to the traced images it patches (kTracerNotify). Decided
  // by the first spawn_in_session (0 before, 2 off, 3 off because the kernel cannot): on where the kernel count decides idleness,
  // the serial gate is off, and the kernel runs the answered thread on the answering cpu
  // (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, Linux 6.6). Turned off when the controller gives the
  // kernel count up (images patched later keep their sleeps with the tracer).
  std::atomic<uint32_t> notify_sleeps;
  // Go images whose time-stamp counter reads the tracer answers (docs/tracer.md "Go's
  // randomness"), by route: the CPU's trap, runtime.cputicks patched (machines that accept the
  // trap's prctl and ignore it), or neither (their seeds stay real: runs may differ). Statistics,
  // written by the tracer, read by `--stats`.
  std::atomic<uint32_t> tsc_trapped_images;
  std::atomic<uint32_t> tsc_patched_images;
  std::atomic<uint32_t> tsc_real_images;
  NotifyListener notify_listeners[kNotifyListeners];
};

struct Segment {
  Header header;
  WaiterSlot waiters[kWaiterSlots];
  ProcessSlot processes[kProcessSlots];
  ThreadStat thread_stats[kThreadStatSlots];
};

static_assert(std::atomic<uint16_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free &&
              std::atomic<uint64_t>::is_always_lock_free && std::atomic<int64_t>::is_always_lock_free,
              "shared atomics must be lock-free");
static_assert(std::is_standard_layout_v<Segment>, "segment must be standard-layout");
static_assert(sizeof(std::atomic<uint32_t>) == 4 && sizeof(std::atomic<uint64_t>) == 8, "atomic sizes");
static_assert(sizeof(WaiterSlot) == 64 && sizeof(ProcessSlot) == 64 && sizeof(ThreadStat) == 64,
              "slots are one cache line");
static_assert(offsetof(Segment, waiters) % 64 == 0 && offsetof(Segment, processes) % 64 == 0 &&
              offsetof(Segment, thread_stats) % 64 == 0);
// The tracer maps the segment read-only into traced processes, where injected code reads the
// clock at these offsets (tracer/clock_blob.S); it once mapped the first page only.
static_assert(offsetof(Header, clock) + sizeof(ClockState) <= 4096, "the clock lies in the first page");
static_assert(offsetof(ClockState, seq) == 0 && offsetof(ClockState, now_ns) == 8 &&
              offsetof(ClockState, real_base_ns) == 16 && offsetof(ClockState, rate_ppm) == 24 &&
              offsetof(ClockState, epoch_ns) == 32 && offsetof(ClockState, mono_origin_ns) == 40 &&
              offsetof(ClockState, realtime_shift_ns) == 48 && offsetof(ClockState, tsc_base) == 64 &&
              offsetof(ClockState, tsc_mult) == 72, "clock_blob.S reads these offsets");
static_assert(offsetof(Header, serial_word) + 4 <= 4096, "held threads wait on serial_word in the mapped first page");
static_assert(offsetof(Header, magic) == 0 && offsetof(Header, version) == 8 && offsetof(Header, total_size) == 16,
              "the fields checked on attach never move");

}  // namespace vtime::abi
