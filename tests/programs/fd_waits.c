/* fd_waits: every fd-readiness wait with a timeout, on the read end of a pipe:
 *  (a) nobody writes: the wait returns 0 after exactly its timeout (two units);
 *  (b) a writer thread sleeps one unit, then writes a byte: the wait (timeout ten units)
 *      returns 1 with the pipe readable, after exactly one unit;
 *  (c) an infinite wait (-1 / NULL timeout) woken the same way.
 * Calls: poll, ppoll, select, pselect, epoll_wait, epoll_pwait, epoll_pwait2. Linux's select
 * also writes the time not slept back into its timeval: checked too. And poll(0) never waits.
 */
#include "check.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>

enum { kInfinite = -1 };

struct wait_result {
  int ready;           /* return value */
  int readable;        /* the pipe's read end was reported readable */
  int64_t select_rem;  /* select only: the timeval left after the call, in ns */
};

struct fixture {
  int rfd, wfd, epfd;
};

typedef struct wait_result (*wait_fn)(const struct fixture* f, int64_t timeout_ns);

static int64_t g_unit;

static int timeout_ms(int64_t ns) { return ns < 0 ? -1 : (int)(ns / VT_NS_PER_MS); }

static struct wait_result do_poll(const struct fixture* f, int64_t timeout_ns) {
  struct pollfd p = {.fd = f->rfd, .events = POLLIN, .revents = 0};
  struct wait_result r = {0, 0, 0};
  r.ready = (int)SYS(poll(&p, 1, timeout_ms(timeout_ns)));
  r.readable = (p.revents & POLLIN) != 0;
  return r;
}

static struct wait_result do_ppoll(const struct fixture* f, int64_t timeout_ns) {
  struct pollfd p = {.fd = f->rfd, .events = POLLIN, .revents = 0};
  const struct timespec ts = vt_ts(timeout_ns);
  sigset_t empty;
  sigemptyset(&empty);
  struct wait_result r = {0, 0, 0};
  r.ready = (int)SYS(ppoll(&p, 1, timeout_ns < 0 ? NULL : &ts, &empty));
  r.readable = (p.revents & POLLIN) != 0;
  return r;
}

static struct wait_result do_select(const struct fixture* f, int64_t timeout_ns) {
  fd_set set;
  FD_ZERO(&set);
  FD_SET(f->rfd, &set);
  struct timeval tv = vt_tv(timeout_ns);
  struct wait_result r = {0, 0, 0};
  r.ready = (int)SYS(select(f->rfd + 1, &set, NULL, NULL, timeout_ns < 0 ? NULL : &tv));
  r.readable = FD_ISSET(f->rfd, &set);
  r.select_rem = vt_tv_ns(tv);
  return r;
}

static struct wait_result do_pselect(const struct fixture* f, int64_t timeout_ns) {
  fd_set set;
  FD_ZERO(&set);
  FD_SET(f->rfd, &set);
  const struct timespec ts = vt_ts(timeout_ns);
  sigset_t empty;
  sigemptyset(&empty);
  struct wait_result r = {0, 0, 0};
  r.ready = (int)SYS(pselect(f->rfd + 1, &set, NULL, NULL, timeout_ns < 0 ? NULL : &ts, &empty));
  r.readable = FD_ISSET(f->rfd, &set);
  return r;
}

static struct wait_result epoll_result(const struct fixture* f, int n,
                                       const struct epoll_event* ev) {
  struct wait_result r = {n, 0, 0};
  r.readable = n == 1 && ev->data.fd == f->rfd && (ev->events & EPOLLIN) != 0;
  return r;
}

static struct wait_result do_epoll_wait(const struct fixture* f, int64_t timeout_ns) {
  struct epoll_event ev;
  memset(&ev, 0, sizeof ev);
  const int n = (int)SYS(epoll_wait(f->epfd, &ev, 1, timeout_ms(timeout_ns)));
  return epoll_result(f, n, &ev);
}

static struct wait_result do_epoll_pwait(const struct fixture* f, int64_t timeout_ns) {
  struct epoll_event ev;
  memset(&ev, 0, sizeof ev);
  sigset_t empty;
  sigemptyset(&empty);
  const int n = (int)SYS(epoll_pwait(f->epfd, &ev, 1, timeout_ms(timeout_ns), &empty));
  return epoll_result(f, n, &ev);
}

static struct wait_result do_epoll_pwait2(const struct fixture* f, int64_t timeout_ns) {
  struct epoll_event ev;
  memset(&ev, 0, sizeof ev);
  const struct timespec ts = vt_ts(timeout_ns);
  const int n = (int)SYS(epoll_pwait2(f->epfd, &ev, 1, timeout_ns < 0 ? NULL : &ts, NULL));
  return epoll_result(f, n, &ev);
}

struct writer_arg {
  int wfd;
  int64_t delay;
};

static void* writer(void* p) {
  const struct writer_arg* a = (const struct writer_arg*)p;
  vt_sleep(a->delay);
  SYS(write(a->wfd, "x", 1));
  return NULL;
}

static void run_timeout(const char* name, wait_fn fn, const struct fixture* f) {
  const int64_t t0 = vt_mono();
  const struct wait_result r = fn(f, 2 * g_unit);
  const int64_t elapsed = vt_mono() - t0;
  printf("  %-13s timeout:  %lld ns\n", name, (long long)elapsed);
  CHECK_EQ(r.ready, 0);
  CHECK(!r.readable);
  CHECK_ELAPSED(elapsed, 2 * g_unit);
  if (fn == do_select) CHECK_EQ(r.select_rem, 0);
}

/* timeout_units == kInfinite: wait without a timeout. */
static void run_ready(const char* name, wait_fn fn, const struct fixture* f, int timeout_units) {
  /* t0 before the writer starts sleeping: natively the wake-up can then never look early. */
  const int64_t t0 = vt_mono();
  struct writer_arg arg = {f->wfd, g_unit};
  pthread_t t;
  PT(pthread_create(&t, NULL, writer, &arg));
  const int64_t timeout = timeout_units == kInfinite ? -1 : timeout_units * g_unit;
  /* When the wait began: natively, after the thread was created, so the writer's write comes at
   * least g_unit - (t_wait - t0) into it. Virtually the clock has not moved: t_wait == t0. */
  const int64_t t_wait = vt_mono();
  const struct wait_result r = fn(f, timeout);
  const int64_t elapsed = vt_mono() - t0;
  PT(pthread_join(t, NULL));
  printf("  %-13s %s %lld ns\n", name, timeout_units == kInfinite ? "infinite:" : "ready:   ",
         (long long)elapsed);
  CHECK_EQ(r.ready, 1);
  CHECK(r.readable);
  CHECK_ELAPSED(elapsed, g_unit);
  if (fn == do_select && timeout_units != kInfinite) {
    /* Linux writes the unslept time back into select's timeval: at most the timeout less the
     * part of g_unit that fell inside the wait (exactly (timeout_units - 1) units virtually). */
    CHECK_REMAINING(r.select_rem, (timeout_units - 1) * g_unit + (t_wait - t0), timeout_units * g_unit);
  }
  char c = 0;
  CHECK_EQ(SYS(read(f->rfd, &c, 1)), 1);
  CHECK_EQ(c, 'x');
}

int main(void) {
  vt_begin("fd_waits");
  g_unit = vt_unit(30 * VT_NS_PER_MS);

  struct fixture f;
  int fds[2];
  SYS(pipe2(fds, O_CLOEXEC));
  f.rfd = fds[0];
  f.wfd = fds[1];
  f.epfd = (int)SYS(epoll_create1(EPOLL_CLOEXEC));
  struct epoll_event ev;
  memset(&ev, 0, sizeof ev);
  ev.events = EPOLLIN;
  ev.data.fd = f.rfd;
  SYS(epoll_ctl(f.epfd, EPOLL_CTL_ADD, f.rfd, &ev));

  static const struct {
    const char* name;
    wait_fn fn;
  } kWaits[] = {
      {"poll", do_poll},
      {"ppoll", do_ppoll},
      {"select", do_select},
      {"pselect", do_pselect},
      {"epoll_wait", do_epoll_wait},
      {"epoll_pwait", do_epoll_pwait},
      {"epoll_pwait2", do_epoll_pwait2},
  };
  for (size_t i = 0; i < sizeof kWaits / sizeof kWaits[0]; ++i) {
    run_timeout(kWaits[i].name, kWaits[i].fn, &f);
    run_ready(kWaits[i].name, kWaits[i].fn, &f, 10);
    run_ready(kWaits[i].name, kWaits[i].fn, &f, kInfinite);
  }

  /* A zero timeout polls without waiting: no time passes at all under virtual time. */
  const int64_t t0 = vt_mono();
  CHECK_EQ(do_poll(&f, 0).ready, 0);
  CHECK_EQ(do_epoll_wait(&f, 0).ready, 0);
  CHECK_ELAPSED(vt_mono() - t0, 0);

  close(f.epfd);
  close(f.rfd);
  close(f.wfd);
  return vt_finish();
}
