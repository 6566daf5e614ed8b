/* A statically linked C program's timers, armed by its libc with raw system calls: a periodic
 * timerfd (reads, expirations counted while nobody read, timerfd_gettime, disarming), an absolute
 * realtime timerfd seen through epoll, POSIX timers notifying by signal (overruns while the signal
 * is blocked), to a thread (SIGEV_THREAD_ID) and through glibc's SIGEV_THREAD helper, alarm and a
 * periodic setitimer(ITIMER_REAL). Prints the monotonic time elapsed at every event: under vtime
 * each one is exact, and every line is what the same program prints natively (where the times
 * are only approximately these). With "exec PROGRAM ARGS...", it arms a POSIX timer for 1 s and an
 * alarm for 2 s and executes PROGRAM: the timer is gone with the old image, the alarm is not. */
#define _GNU_SOURCE
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static struct timespec t0;
static char when_buf[4][32];
static int when_next;
static volatile sig_atomic_t alarms, usr1;
static sem_t done;

static const char* when(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  long long ns = (t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec);
  char* b = when_buf[when_next++ % 4];
  snprintf(b, 32, "%lld.%09lld", ns / 1000000000, ns % 1000000000);
  return b;
}

static const char* span(struct timespec ts) {
  char* b = when_buf[when_next++ % 4];
  snprintf(b, 32, "%lld.%09ld", (long long)ts.tv_sec, ts.tv_nsec);
  return b;
}

static void sleep_ns(long long ns) {
  struct timespec d = {ns / 1000000000, ns % 1000000000};
  nanosleep(&d, NULL);
}

static void on_alarm(int sig) { (void)sig; ++alarms; }
static void on_usr1(int sig) { (void)sig; usr1 = 1; }
static void on_thread_timer(union sigval v) {
  printf("SIGEV_THREAD callback at %s, value %d\n", when(), v.sival_int);
  fflush(stdout);
  sem_post(&done);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc > 2 && strcmp(argv[1], "exec") == 0) {
    /* An alarm outlives execve (a POSIX timer does not): the executed program gets SIGALRM. */
    timer_t gone;
    timer_create(CLOCK_MONOTONIC, NULL, &gone);
    struct itimerspec one = {{0, 0}, {1, 0}};
    timer_settime(gone, 0, &one, NULL); /* would kill with SIGALRM at 1 s if it survived */
    alarm(2);
    execvp(argv[2], argv + 2);
    return 127;
  }
  clock_gettime(CLOCK_MONOTONIC, &t0);
  uint64_t n = 0;

  /* A periodic timerfd: first at 1 s, then every 250 ms. */
  int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
  struct itimerspec per = {{0, 250000000}, {1, 0}}, cur, old;
  timerfd_settime(tfd, 0, &per, NULL);
  for (int i = 0; i < 2; ++i) {
    if (read(tfd, &n, sizeof n) != sizeof n) return 1;
    printf("timerfd: %llu expiration(s) at %s\n", (unsigned long long)n, when());
  }
  sleep_ns(600000000); /* two expirations nobody reads */
  if (read(tfd, &n, sizeof n) != sizeof n) return 1;
  printf("timerfd: %llu expiration(s) at %s\n", (unsigned long long)n, when());
  timerfd_gettime(tfd, &cur);
  printf("timerfd_gettime: %s left, interval %s\n", span(cur.it_value), span(cur.it_interval));
  struct itimerspec off = {{0, 0}, {0, 0}};
  timerfd_settime(tfd, 0, &off, &old);
  printf("disarmed with %s left\n", span(old.it_value));
  close(tfd);

  /* An absolute realtime timerfd 1.5 s ahead, non-blocking, waited for with epoll. */
  int rfd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  struct itimerspec abs = {{0, 0}, {wall.tv_sec + 1, wall.tv_nsec + 500000000}};
  if (abs.it_value.tv_nsec >= 1000000000) {
    abs.it_value.tv_sec += 1;
    abs.it_value.tv_nsec -= 1000000000;
  }
  timerfd_settime(rfd, TFD_TIMER_ABSTIME, &abs, NULL);
  if (read(rfd, &n, sizeof n) < 0) printf("read before it expires: %s\n", strerror(errno));
  int ep = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event ev = {.events = EPOLLIN};
  epoll_ctl(ep, EPOLL_CTL_ADD, rfd, &ev);
  int ready = epoll_wait(ep, &ev, 1, -1);
  if (read(rfd, &n, sizeof n) != sizeof n) return 1;
  printf("epoll: %d ready at %s, %llu expiration(s)\n", ready, when(), (unsigned long long)n);
  close(ep);
  close(rfd);

  /* A POSIX timer signalling SIGRTMIN (blocked, taken with sigwaitinfo). */
  sigset_t rt;
  sigemptyset(&rt);
  sigaddset(&rt, SIGRTMIN);
  sigprocmask(SIG_BLOCK, &rt, NULL);
  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_SIGNAL;
  sev.sigev_signo = SIGRTMIN;
  sev.sigev_value.sival_int = 42;
  timer_t pt;
  timer_create(CLOCK_MONOTONIC, &sev, &pt);
  struct itimerspec half = {{0, 0}, {0, 500000000}};
  timer_settime(pt, 0, &half, NULL);
  siginfo_t si;
  sigwaitinfo(&rt, &si);
  timer_gettime(pt, &cur);
  printf("POSIX timer signal at %s: %s, value %d, %s left\n", when(), si.si_code == SI_TIMER ? "SI_TIMER" : "not SI_TIMER",
         si.si_value.sival_int, span(cur.it_value));
  struct itimerspec tenth = {{0, 100000000}, {0, 100000000}};
  timer_settime(pt, 0, &tenth, NULL);
  sleep_ns(350000000); /* the signal stays pending from the first expiration on */
  sigwaitinfo(&rt, &si);
  printf("pending signal taken at %s, timer_getoverrun %d\n", when(), timer_getoverrun(pt));
  timer_delete(pt);

  /* To this thread, with a handler. */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = SIGUSR1;
  sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  timer_create(CLOCK_BOOTTIME, &sev, &pt);
  struct itimerspec short_one = {{0, 0}, {0, 300000000}};
  timer_settime(pt, 0, &short_one, NULL);
  while (!usr1) pause();
  printf("SIGEV_THREAD_ID signal at %s\n", when());
  timer_delete(pt);

  /* glibc's SIGEV_THREAD: its helper thread runs the function. */
  sem_init(&done, 0, 0);
  sev.sigev_notify = SIGEV_THREAD;
  sev.sigev_notify_function = on_thread_timer;
  sev.sigev_value.sival_int = 7;
  timer_create(CLOCK_MONOTONIC, &sev, &pt);
  struct itimerspec quarter = {{0, 0}, {0, 250000000}};
  timer_settime(pt, 0, &quarter, NULL);
  while (sem_wait(&done) != 0) {
  }
  timer_delete(pt);

  /* alarm, then setitimer every 100 ms. */
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  alarm(5);
  printf("alarm(2) returns %u\n", alarm(2));
  while (alarms < 1) pause();
  printf("SIGALRM at %s\n", when());
  struct itimerval it = {{0, 100000}, {0, 100000}}, oit;
  setitimer(ITIMER_REAL, &it, NULL);
  while (alarms < 4) pause();
  printf("SIGALRM %d at %s\n", (int)alarms, when());
  sleep_ns(30000000);
  getitimer(ITIMER_REAL, &oit);
  printf("getitimer: %ld.%06ld left, interval %ld.%06ld\n", (long)oit.it_value.tv_sec, (long)oit.it_value.tv_usec,
         (long)oit.it_interval.tv_sec, (long)oit.it_interval.tv_usec);
  struct itimerval zero = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &zero, &oit);
  sleep_ns(500000000);
  printf("after disarming: %d alarms at %s\n", (int)alarms, when());
  return 0;
}
