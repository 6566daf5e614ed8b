/* A statically linked C program (glibc reads the clock through the vDSO even here): sleeps
 * 2.5 s with nanosleep, 0.25 s with clock_nanosleep and 0.25 s in select, then prints the
 * monotonic time elapsed and the wall clock, which must be exact under vtime. With "signal", a
 * signal interrupts a 10 s nanosleep after 1 s: EINTR and 9 s left in `rem`. With "sigtimedwait"
 * it waits instead in sigtimedwait() with a 30 s timeout, a call vtime leaves on the real clock:
 * vtime must say so (exit 123), not call it a deadlock. With "restart", signals that run no
 * handler (SIGUSR2 ignored, the SIGCHLD of a child's exit) do not end a 3 s nanosleep, which
 * returns 0 at 3 s, and a handler installed with SA_RESTART still ends an absolute
 * clock_nanosleep with EINTR (sleeps never restart after a handler), at the signal's instant
 * (4 s); the child that sent it ends at 6 s. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void on_usr1(int sig) { (void)sig; }

static void handle_usr1(int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sa.sa_flags = flags;
  sigaction(SIGUSR1, &sa, NULL);
}

/* A child (forked: traced too) that sleeps 1 s, sends `sig` to `parent`, sleeps `then_s` s more
 * and exits. */
static pid_t signal_after_1s(pid_t parent, int sig, int then_s) {
  pid_t child = fork();
  if (child == 0) {
    struct timespec one = {1, 0}, then = {then_s, 0};
    nanosleep(&one, NULL);
    kill(parent, sig);
    if (then_s > 0) nanosleep(&then, NULL);
    _exit(0);
  }
  return child;
}

static long long ns_since(const struct timespec* t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (t.tv_sec - t0->tv_sec) * 1000000000LL + (t.tv_nsec - t0->tv_nsec);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "sigtimedwait") == 0) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    struct timespec ts = {30, 0};
    return sigtimedwait(&set, NULL, &ts) < 0 ? 0 : 1;
  }
  struct timespec t0, wall;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (argc > 1 && strcmp(argv[1], "signal") == 0) {
    /* A child signals us 1 s into our 10 s sleep: EINTR at virtual 1 s. */
    handle_usr1(0);
    pid_t child = signal_after_1s(getpid(), SIGUSR1, 0);
    struct timespec ten = {10, 0}, rem = {-1, -1};
    int r = nanosleep(&ten, &rem);
    int e = errno;
    long long ns = ns_since(&t0);
    waitpid(child, NULL, 0);
    printf("nanosleep %d (%s) after %lld.%09lld s, %lld.%09ld s left\n", r, r ? strerror(e) : "ok", ns / 1000000000,
           ns % 1000000000, (long long)rem.tv_sec, rem.tv_nsec);
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "restart") == 0) {
    signal(SIGUSR2, SIG_IGN);
    handle_usr1(SA_RESTART);
    pid_t child = signal_after_1s(getpid(), SIGUSR2, 1); /* its SIGCHLD at 2 s */
    struct timespec three = {3, 0};
    int r = nanosleep(&three, NULL);
    long long ns = ns_since(&t0);
    waitpid(child, NULL, 0);
    child = signal_after_1s(getpid(), SIGUSR1, 2);
    struct timespec until = {t0.tv_sec + 5, t0.tv_nsec};
    int a = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
    long long ns2 = ns_since(&t0);
    /* The interrupted sleep's deadline (5 s) must be gone: the next instant is the child's end. */
    waitpid(child, NULL, 0);
    long long ns3 = ns_since(&t0);
    printf("nanosleep %d at %lld.%09lld s; clock_nanosleep %s at %lld.%09lld s; child gone at %lld.%09lld s\n", r,
           ns / 1000000000, ns % 1000000000, a ? strerror(a) : "ok", ns2 / 1000000000, ns2 % 1000000000, ns3 / 1000000000,
           ns3 % 1000000000);
    return 0;
  }
  struct timespec d = {2, 500000000};
  nanosleep(&d, NULL);
  struct timespec q = {0, 250000000};
  clock_nanosleep(CLOCK_MONOTONIC, 0, &q, NULL);
  struct timeval tv = {0, 250000};
  int n = select(0, NULL, NULL, NULL, &tv);
  long long ns = ns_since(&t0);
  clock_gettime(CLOCK_REALTIME, &wall);
  printf("select %d, elapsed %lld.%09lld s, wall %lld.%09ld, time() %lld\n", n, ns / 1000000000, ns % 1000000000,
         (long long)wall.tv_sec, wall.tv_nsec, (long long)time(NULL));
  return 0;
}
