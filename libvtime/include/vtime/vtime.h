/* vtime C API: drop-in replacements for the libc time functions.
 *
 * What it is for: programs that the LD_PRELOAD shim cannot reach (static binaries, raw
 * syscalls) are rewritten by `vtime rewrite` to call these functions instead of libc's. Each one
 * has exactly the signature and the errno/return conventions of the libc function it replaces.
 * Inside a vtime session (VTIME_SESSION in the environment) they read and wait on the virtual
 * clock; with no session they call libc and behave exactly like the original.
 *
 * Example:
 *     #include <vtime/vtime.h>
 *     struct timespec ts;
 *     vtime_clock_gettime(CLOCK_MONOTONIC, &ts);   // virtual under `vtime exec`
 *     vtime_sleep(3600);                           // returns at once in virtual time
 *
 * The shim (libvtime-shim.so) defines the libc names themselves as thin forwarders to these.
 */
#ifndef VTIME_VTIME_H
#define VTIME_VTIME_H

#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this process is attached to a vtime session, 0 otherwise. */
int vtime_active(void);

/* For schedulers under `vtime run` that learn decisions outside an exchange (a bridge to a real
 * resource manager hears from a job's process that the job started, after it has replied):
 * asks the broker to send the scheduler a message (an empty event list, a "tick") at the current
 * virtual instant once the tree is idle again, so the decision reaches the simulator at the
 * instant it was taken. Several requests before one idle point give one tick. Returns 0, or -1
 * outside a session (no broker to ask; nothing happens). The shim exports it: look it up with
 * dlsym(RTLD_DEFAULT, "vtime_request_tick") to stay runnable without vtime. */
int vtime_request_tick(void);

/* Declares that the scheduler asks for every tick it needs with vtime_request_tick(): from now
 * on the broker no longer ticks it merely because a timer fired somewhere in its tree (by
 * default it does, so that what a scheduler's timer threads queued is handed over). Sound only
 * for a scheduler all of whose decisions reach it through a path that asks for a tick, e.g.
 * vtime-slurm, whose daemons' timers fire ten times a virtual second. Returns 0, or -1 outside
 * a session. Exported by the shim like vtime_request_tick. */
int vtime_ticks_on_request(void);

/* Blocks until every other thread of the wrapped tree is idle, then returns at the same virtual
 * instant (the clock does not move: it is a wait whose deadline is now, woken at the next idle
 * point). For a bridge that hands a real system several stimuli at one instant (a job ended, a
 * job submitted): settling after each one lets the system react to it completely before the next,
 * so what it decides no longer depends on how its threads raced. Returns 0, or -1 outside a
 * session (returns at once). Exported by the shim like vtime_request_tick. */
int vtime_settle(void);

/* From now on, one process of the tree runs at a time (docs/design.md "Serialised processes"):
 * a traced process (a static or Go program) whose wait ends while another process of the tree
 * is running is held until the tree is idle, and held processes then run one after another,
 * in start order (the root first, then by rank among their parent's children; not by pid). For
 * a bridge whose daemons talk to each other at one virtual instant (vtime-k8s: the API server,
 * etcd and kube-scheduler), so that what each reads from its sockets no longer depends on how
 * far the others got in real time. Returns 0, or -1 outside a session. Exported by the shim like
 * vtime_request_tick. */
int vtime_serialize(void);

/* vtime_serialize, and one thread at a time within each traced process: a thread woken by
 * another thread of its process (a futex wake, data on its descriptors) is held until that one
 * waits, then the held threads run one after another in the order their process made them, and
 * new threads wait for their turn. A Go runtime hands its processor from thread to thread, and
 * each thread draws from its own random generator (map iteration, select): with processes alone
 * serialised, which thread took the processor first was a race. Programs executed from now on are
 * covered (their futex waits stop for the tracer). Dearer: one more ptrace stop per futex wait
 * and an idle decision per hand-over (docs/design.md). Returns 0, or -1 outside a session. */
int vtime_serialize_threads(void);

/* The session's CPU-time model (--cpu-model): 0 zero, 1 calls, 2 real; -1 outside a session. For
 * a scheduler whose determinism depends on it (vtime-k8s warns under anything but zero).
 * Exported by the shim like vtime_request_tick. */
int vtime_cpu_model(void);

/* clocks */
int vtime_clock_gettime(clockid_t clk, struct timespec* ts);
int vtime_clock_getres(clockid_t clk, struct timespec* res);
int vtime_gettimeofday(struct timeval* tv, void* tz);
time_t vtime_time(time_t* out);
int vtime_timespec_get(struct timespec* ts, int base);

/* setting the clock: acts on the session's virtual CLOCK_REALTIME only, never the host's
 * (EPERM without CAP_SYS_TIME, EINVAL for clocks Linux cannot set, as without vtime) */
int vtime_clock_settime(clockid_t clk, const struct timespec* ts);
int vtime_settimeofday(const struct timeval* tv, const void* tz);
int vtime_stime(const time_t* t);
struct timex;
int vtime_adjtimex(struct timex* tx);
int vtime_clock_adjtime(clockid_t clk, struct timex* tx);
int vtime_adjtime(const struct timeval* delta, struct timeval* olddelta);
/* ntp_gettime(3) (glibc's name for it is ntp_gettimex): the session's realtime and a clock that
 * is exact and synchronised, as a read-only vtime_adjtimex reports */
struct ntptimeval;
int vtime_ntp_gettime(struct ntptimeval* ntv);
/* sleeps */
int vtime_nanosleep(const struct timespec* req, struct timespec* rem);
int vtime_clock_nanosleep(clockid_t clk, int flags, const struct timespec* req, struct timespec* rem);
int vtime_usleep(useconds_t usec);
unsigned int vtime_sleep(unsigned int seconds);
/* sched_yield(2); under `--cpu-model calls` it costs virtual time like a clock read */
int vtime_sched_yield(void);

/* fd readiness with timeouts */
int vtime_poll(struct pollfd* fds, nfds_t nfds, int timeout_ms);
int vtime_ppoll(struct pollfd* fds, nfds_t nfds, const struct timespec* timeout, const sigset_t* sigmask);
int vtime_select(int nfds, fd_set* r, fd_set* w, fd_set* e, struct timeval* timeout);
int vtime_pselect(int nfds, fd_set* r, fd_set* w, fd_set* e, const struct timespec* timeout,
                  const sigset_t* sigmask);
int vtime_epoll_wait(int epfd, struct epoll_event* events, int maxevents, int timeout_ms);
int vtime_epoll_pwait(int epfd, struct epoll_event* events, int maxevents, int timeout_ms,
                      const sigset_t* sigmask);
int vtime_epoll_pwait2(int epfd, struct epoll_event* events, int maxevents,
                       const struct timespec* timeout, const sigset_t* sigmask);

/* timed synchronisation */
int vtime_pthread_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex, const struct timespec* abstime);
int vtime_pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clk,
                                 const struct timespec* abstime);
int vtime_sem_timedwait(sem_t* sem, const struct timespec* abstime);
int vtime_sem_clockwait(sem_t* sem, clockid_t clk, const struct timespec* abstime);
int vtime_pthread_mutex_timedlock(pthread_mutex_t* mutex, const struct timespec* abstime);
int vtime_pthread_mutex_clocklock(pthread_mutex_t* mutex, clockid_t clk, const struct timespec* abstime);
int vtime_pthread_rwlock_timedrdlock(pthread_rwlock_t* lock, const struct timespec* abstime);
int vtime_pthread_rwlock_timedwrlock(pthread_rwlock_t* lock, const struct timespec* abstime);
int vtime_pthread_rwlock_clockrdlock(pthread_rwlock_t* lock, clockid_t clk, const struct timespec* abstime);
int vtime_pthread_rwlock_clockwrlock(pthread_rwlock_t* lock, clockid_t clk, const struct timespec* abstime);
/* Releases a rwlock and wakes the virtual timed waiters of this process on it. */
int vtime_pthread_rwlock_unlock(pthread_rwlock_t* lock);
int vtime_pthread_timedjoin_np(pthread_t thread, void** retval, const struct timespec* abstime);
int vtime_pthread_clockjoin_np(pthread_t thread, void** retval, clockid_t clk, const struct timespec* abstime);
int vtime_sigtimedwait(const sigset_t* set, siginfo_t* info, const struct timespec* timeout);

/* timers */
unsigned int vtime_alarm(unsigned int seconds);
int vtime_setitimer(int which, const struct itimerval* value, struct itimerval* old);
int vtime_getitimer(int which, struct itimerval* value);
int vtime_timer_create(clockid_t clk, struct sigevent* sev, timer_t* timerid);
int vtime_timer_settime(timer_t timerid, int flags, const struct itimerspec* value, struct itimerspec* old);
int vtime_timer_gettime(timer_t timerid, struct itimerspec* value);
int vtime_timer_getoverrun(timer_t timerid);
int vtime_timer_delete(timer_t timerid);
int vtime_timerfd_create(int clk, int flags);
int vtime_timerfd_settime(int fd, int flags, const struct itimerspec* value, struct itimerspec* old);
int vtime_timerfd_gettime(int fd, struct itimerspec* value);

/* syscall(2) for the time-related numbers (SYS_clock_gettime, SYS_gettimeofday, SYS_time,
 * SYS_nanosleep, SYS_clock_nanosleep, SYS_futex with a timeout); other numbers pass through. */
long vtime_syscall(long number, ...);

#ifdef __cplusplus
}
#endif

#endif /* VTIME_VTIME_H */
