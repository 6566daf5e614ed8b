// The per-process agent thread (see agent.h).
#include <vtime/internal/agent.h>

#include <vtime/internal/futex.h>
#include <vtime/internal/slots.h>
#include <vtime/internal/timers.h>

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vtime::detail {
namespace {

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
AgentAction* g_actions = nullptr;  // kWaiterSlots entries, allocated on first use
bool g_started = false;

// Runs the actions of the woken slots; returns true when one must be repeated (abi::kAgentRetry:
// its waiter may not have been blocked yet) and stays registered until the waiter removes it.
bool run_due(ProcessContext& c) {
  bool repeat = false;
  for (uint32_t i = 0, n = waiter_limit(*c.seg); i < n; ++i) {
    AgentAction& a = g_actions[i];
    if (!a.fn) continue;
    auto& s = c.seg->waiters[i];
    if (s.state.load(std::memory_order_acquire) != abi::kWoken) continue;
    AgentAction copy = a;
    bool again = a.lost_if_early && (s.tracer_flags.load(std::memory_order_acquire) & abi::kAgentRetry) != 0;
    if (!a.persistent && !again) a.fn = nullptr;  // one-shot: the waiter consumes the wake itself
    repeat = repeat || again;
    copy.fn(c, i, copy.arg, copy.arg2);
  }
  return repeat;
}

// Real-time pauses between repeats (run_due): a waiter preempted before its blocking call gets
// the cpu back within a few scheduler slices; a longer stay (woken, now waiting for the mutex a
// condition wait takes back) costs a wake-up per kRepeatMaxNs.
constexpr int64_t kRepeatFirstNs = 1'000'000;
constexpr int64_t kRepeatMaxNs = 32'000'000;

void* agent_main(void* arg) {
  auto* c = static_cast<ProcessContext*>(arg);
  auto& slot = c->seg->processes[c->proc_index];
  auto& word = slot.agent_word;
  // Lets the controller prove this thread idle with one read (Controller, "sleeper proofs"):
  // only this thread ever waits on agent_word, always in wait_word.
  slot.agent_tid.store(gettid_raw(), std::memory_order_release);
  uint64_t sets_seen = c->seg->header.clock.realtime_sets.load(std::memory_order_acquire);
  int64_t pause = kRepeatFirstNs;
  for (;;) {
    uint32_t w = word.load(std::memory_order_acquire);
    pthread_mutex_lock(&g_lock);
    bool repeat = run_due(*c);
    uint64_t sets = c->seg->header.clock.realtime_sets.load(std::memory_order_acquire);
    if (sets != sets_seen) {
      sets_seen = sets;
      timers_on_clock_set(*c);
    }
    pthread_mutex_unlock(&g_lock);
    if (!repeat) {
      pause = kRepeatFirstNs;
      wait_word(*c, &word, w);
      continue;
    }
    // Paused longer each time nothing new came in between; work from the controller restarts it.
    timespec ts{0, static_cast<long>(pause)};
    bool timed_out = futex_wait(&word, w, &ts) == ETIMEDOUT;
    if (timed_out && !owner_alive(*c)) die_owner_gone(*c);  // as wait_word's heartbeat does
    pause = timed_out ? std::min(pause * 2, kRepeatMaxNs) : kRepeatFirstNs;
  }
  return nullptr;
}

void start_locked(ProcessContext& c) {
  if (g_started) return;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);  // the agent inherits a fully blocked mask
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_t t;
  int r = pthread_create(&t, &attr, agent_main, &c);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (r != 0) {
    fprintf(stderr, "vtime: cannot start the agent thread: %s\n", strerror(r));
    abort();
  }
  pthread_setname_np(t, "vtime-agent");
  g_started = true;
}

}  // namespace

void agent_lock() { pthread_mutex_lock(&g_lock); }
void agent_unlock() { pthread_mutex_unlock(&g_lock); }

void agent_add(ProcessContext& c, uint32_t slot, const AgentAction& action) {
  pthread_mutex_lock(&g_lock);
  if (!g_actions) g_actions = static_cast<AgentAction*>(calloc(abi::kWaiterSlots, sizeof(AgentAction)));
  g_actions[slot] = action;
  start_locked(c);
  pthread_mutex_unlock(&g_lock);
}

void agent_remove(ProcessContext&, uint32_t slot) {
  pthread_mutex_lock(&g_lock);
  if (g_actions) g_actions[slot] = AgentAction{};
  pthread_mutex_unlock(&g_lock);
}

void agent_after_fork_child() {
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  memcpy(&g_lock, &fresh, sizeof g_lock);
  if (g_actions) memset(static_cast<void*>(g_actions), 0, abi::kWaiterSlots * sizeof(AgentAction));
  g_started = false;
}

}  // namespace vtime::detail
