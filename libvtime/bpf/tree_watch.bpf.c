// The kernel's count of the wrapped tree's threads that are running, runnable, or being woken
// (see vtime/tree_watch.h for what the controller makes of it, and docs/shim.md "Idle detection").
//
// Every thread of the tree carries a word in task-local storage: TRACKED (it belongs to the
// tree; set once, at its birth, never cleared), RUN (on a cpu or queued for one) and PEND (a
// wake-up has begun and the scheduler has not yet queued it). A thread is *active* when RUN or
// PEND is set; `active` counts them. Each change of a word is one atomic read-modify-write, and
// only a change between "no bit" and "some bit" moves `active` (and `generation`), so two cpus
// updating one thread at once (a wake-up racing the thread's own switch-out) count once.
//
// The events, in the kernel's order for one thread:
//   sched_process_fork   a child of a tracked thread (a thread or a process) is born TRACKED|RUN;
//                        so is the one child of the thread armed by user space (the tree's root)
//   sched_waking         a wake-up begins (in the waker's context): PEND
//   sched_wakeup(_new)   the thread is queued: RUN, then PEND cleared
//   sched_switch (next)  on a cpu: RUN
//   sched_switch (prev)  leaves the cpu: RUN cleared only when it blocks in an interruptible
//                        sleep (state S, not preempted, its state not reset by a pending signal);
//                        a thread leaving the cpu stopped (T, t), in an uninterruptible sleep (D,
//                        I/O that ends by itself) or preempted stays active, exactly as the /proc
//                        rule counts those letters as running. TASK_DEAD: the thread is gone.
// A wake-up racing a switch-out is counted either way round: waking sets PEND before the
// switch-out clears RUN, or after it (then the thread was inactive for a moment and the waker,
// running, is what keeps the tree busy).
//
// Network receive work counts too, one per cpu that has some (`net_rx`). A TCP segment on the
// loopback is handed to the receiver in a softirq; usually the sender's own system call runs it
// before returning, but the kernel may leave it to a later interrupt or to ksoftirqd, after the
// sender went to sleep: the tree then looked idle while data was on its way to a process of it,
// which read it or not depending on how fast the machine was (seen: ~2 such deliveries in a
// vtime-k8s burst run, outside any thread of the tree). A cpu is active from the NET_RX raise
// until its handler returns with nothing raised again; the receiver's wake-up, inside the
// handler, makes the receiver active before that. Raises from a device's interrupt between the
// kernel's snapshot of its pending work and the handler's entry may be missed; the loopback
// raises with interrupts on and softirqs off, never there.
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

// The fields read, relocated against the running kernel's BTF (CO-RE).
typedef struct {
  int counter;
} atomic_t;

struct signal_struct {
  atomic_t live;  // the group's threads that have not begun their exit
} __attribute__((preserve_access_index));

struct task_struct {
  int pid;
  int tgid;
  unsigned int __state;
  struct signal_struct *signal;
} __attribute__((preserve_access_index));

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, __u32);
} tree_tasks SEC(".maps");

// Wakes the controller when `active` drops to zero (it waits on the ring's epoll descriptor).
struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4096);
} idle_ring SEC(".maps");

#define TRACKED 1u
#define RUN 2u
#define PEND 4u
#define ACTIVE (RUN | PEND)

#define NET_RX_SOFTIRQ 3

// Kernel task states (include/linux/sched.h; stable since 5.14).
#define TASK_INTERRUPTIBLE 0x1u
#define TASK_DEAD 0x80u
#define TASK_FROZEN 0x8000u

// The last exits, by exit number (`exits` before it counted the exit) modulo the ring's size:
// which thread of which process, and whether the process may have ended with it (its leader, or
// its group's last thread). The controller frees what a dead thread held in its tables and looks
// in /proc at the processes that may have ended; at every process only when it missed entries
// (more exits than the ring holds between two looks). `seq` is the exit number + 1 once the
// entry is written, 0 while it is being written: a reader that reads it equal before and after
// the other fields read them whole.
#define EXITED_RING 64

struct exited_thread {
  __u64 seq;
  __u32 tid;
  __u32 tgid;
  __u32 process;
  __u32 pad;
};

// The counters, in .bss: user space maps them and reads them with plain loads. One struct, so
// its layout is the one TreeCounters declares in tree_watch.cpp.
struct tree_counters {
  __u64 active;      // threads of the tree with RUN or PEND
  __u64 generation;  // moves with every change of `active`, every birth and death
  __u64 exits;       // threads of the tree that have exited
  __u32 armed_tid;   // the next child this thread forks is the tree's root
  __s32 root_pid;    // that child, once born
  __u32 lost;        // children that could not be tracked: the count is no longer complete
  __u32 pad;
  struct exited_thread exited[EXITED_RING];
} counters = {};

// Per cpu: PEND (NET_RX raised, its handler not entered), RUN (the handler runs). A map of its
// own: user space maps .bss as the counters alone.
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u32);
} net_rx SEC(".maps");

// The order of the updates matters: user space reads generation, then active, then exits, and
// the vCPU running this program may be preempted by the hypervisor between two of its updates
// for as long as a whole idle decision takes (seen: tracer.serial_gate under load). A thread
// that becomes active raises `active` before `generation`: a reader that sees the new generation
// sees the count, and one that sees neither sees the same nothing twice (the event had not begun
// for it; whoever caused it is active, or outside the tree). One that becomes inactive moves
// `generation` first: a reader that sees the lower count then differs in generation from its
// first read, or read the count low twice after both updates.
static __always_inline void account(__u32 old, int now_active) {
  int was_active = (old & ACTIVE) != 0;
  if (was_active == now_active) return;
  if (now_active) {
    __sync_fetch_and_add(&counters.active, 1);
    __sync_fetch_and_add(&counters.generation, 1);
  } else {
    __sync_fetch_and_add(&counters.generation, 1);
    if (__sync_fetch_and_add(&counters.active, -1) == 1) {
      __u64 g = counters.generation;
      bpf_ringbuf_output(&idle_ring, &g, sizeof g, 0);
    }
  }
}

// The process that may arm a root (its loader, or the helper's caller: tree_watch_load.h), set
// before the program is loaded and read-only after. User space can write armed_tid, but only a
// thread of this process forking makes a root.
const volatile int owner_tgid = 0;

SEC("tp_btf/sched_process_fork")
int BPF_PROG(tree_fork, struct task_struct *parent, struct task_struct *child) {
  __u32 *p = bpf_task_storage_get(&tree_tasks, parent, 0, 0);
  int adopt = p && (*p & TRACKED);
  if (!adopt && counters.armed_tid != 0 && parent->pid == (int)counters.armed_tid &&
      parent->tgid == owner_tgid) {
    adopt = 1;
    counters.armed_tid = 0;
    counters.root_pid = child->pid;
  }
  if (!adopt) return 0;
  __u32 *c = bpf_task_storage_get(&tree_tasks, child, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!c) {
    // No memory for the child's word: it would run unseen. Say so: the controller then goes
    // back to reading /proc for the rest of the session.
    __sync_fetch_and_add(&counters.lost, 1);
    return 0;
  }
  // The child is not running yet, but nothing else can touch its word before wake_up_new_task.
  __u32 old = __sync_fetch_and_or(c, TRACKED | RUN);
  account(old, 1);
  return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(tree_waking, struct task_struct *p) {
  __u32 *v = bpf_task_storage_get(&tree_tasks, p, 0, 0);
  if (!v) return 0;
  account(__sync_fetch_and_or(v, PEND), 1);
  return 0;
}

static __always_inline void queued(struct task_struct *p) {
  __u32 *v = bpf_task_storage_get(&tree_tasks, p, 0, 0);
  if (!v) return;
  account(__sync_fetch_and_or(v, RUN), 1);
  __sync_fetch_and_and(v, ~PEND);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(tree_wakeup, struct task_struct *p) {
  queued(p);
  return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(tree_wakeup_new, struct task_struct *p) {
  queued(p);
  return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tree_switch, _Bool preempt, struct task_struct *prev, struct task_struct *next,
             unsigned int prev_state) {
  __u32 *v = bpf_task_storage_get(&tree_tasks, prev, 0, 0);
  if (v) {
    if (prev_state & TASK_DEAD) {
      // The exit first: a reader that sees the count drop sees the exit too, and looks for a
      // traced zombie (a parent that the tracer has still to notify). The group's `live` was
      // decremented at the start of this thread's exit: zero when it is the last (two threads
      // ending together may both read zero, which only costs the controller a look at /proc).
      __u64 i = __sync_fetch_and_add(&counters.exits, 1);
      struct exited_thread *e = &counters.exited[i & (EXITED_RING - 1)];
      __sync_lock_test_and_set(&e->seq, 0);
      e->tid = prev->pid;
      e->tgid = prev->tgid;
      e->process = prev->pid == prev->tgid || BPF_CORE_READ(prev, signal, live.counter) == 0;
      __sync_lock_test_and_set(&e->seq, i + 1);
      __sync_fetch_and_add(&counters.generation, 1);
      account(__sync_fetch_and_and(v, ~ACTIVE), 0);
    } else if (!preempt && (prev_state & 0xffu) == TASK_INTERRUPTIBLE && !(prev_state & TASK_FROZEN) &&
               BPF_CORE_READ(prev, __state) != 0) {
      // Blocked in S. The second test covers kernels before 6.12, which pass the state read
      // before a pending signal reset it to running (the thread then stays queued).
      __u32 old = __sync_fetch_and_and(v, ~RUN);
      account(old, (old & PEND) != 0);
    }
  }
  __u32 *n = bpf_task_storage_get(&tree_tasks, next, 0, 0);
  if (n) account(__sync_fetch_and_or(n, RUN), 1);
  return 0;
}

// This cpu's word when `vec` is NET_RX, else 0 (the other softirqs do not count).
static __always_inline __u32 *net_rx_word(unsigned int vec) {
  __u32 zero = 0;
  return vec == NET_RX_SOFTIRQ ? bpf_map_lookup_elem(&net_rx, &zero) : 0;
}

SEC("tp_btf/softirq_raise")
int BPF_PROG(tree_net_raise, unsigned int vec) {
  __u32 *w = net_rx_word(vec);
  if (w) account(__sync_fetch_and_or(w, PEND), 1);
  return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(tree_net_entry, unsigned int vec) {
  __u32 *w = net_rx_word(vec);
  if (!w) return 0;
  account(__sync_fetch_and_or(w, RUN), 1);  // before PEND goes: never inactive in between
  __sync_fetch_and_and(w, ~PEND);
  return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(tree_net_exit, unsigned int vec) {
  __u32 *w = net_rx_word(vec);
  if (!w) return 0;
  __u32 old = __sync_fetch_and_and(w, ~RUN);
  account(old, (old & PEND) != 0);  // raised again meanwhile: active until it runs
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
