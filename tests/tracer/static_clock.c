/* A statically linked C program (glibc reads the clock through the vDSO even here): sleeps
 * 2.5 s with nanosleep, 0.25 s with clock_nanosleep and 0.25 s in select, then prints the
 * monotonic time elapsed and the wall clock, which must be exact under vtime. With "signal", a
 * signal interrupts a 10 s nanosleep after 1 s: EINTR and 9 s left in `rem`. With "sigtimedwait"
 * it waits instead in sigtimedwait() with a 30 s timeout, a call vtime leaves on the real clock:
 * vtime must say so (exit 123), not call it a deadlock. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void on_usr1(int sig) { (void)sig; }

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "sigtimedwait") == 0) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    struct timespec ts = {30, 0};
    return sigtimedwait(&set, NULL, &ts) < 0 ? 0 : 1;
  }
  struct timespec t0, t1, wall;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (argc > 1 && strcmp(argv[1], "signal") == 0) {
    /* A child (forked: traced too) signals us 1 s into our 10 s sleep: EINTR at virtual 1 s. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
      struct timespec one = {1, 0};
      nanosleep(&one, NULL);
      kill(parent, SIGUSR1);
      _exit(0);
    }
    struct timespec ten = {10, 0}, rem = {-1, -1};
    int r = nanosleep(&ten, &rem);
    int e = errno;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    waitpid(child, NULL, 0);
    long long ns = (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
    printf("nanosleep %d (%s) after %lld.%09lld s, %lld.%09ld s left\n", r, r ? strerror(e) : "ok", ns / 1000000000,
           ns % 1000000000, (long long)rem.tv_sec, rem.tv_nsec);
    return 0;
  }
  struct timespec d = {2, 500000000};
  nanosleep(&d, NULL);
  struct timespec q = {0, 250000000};
  clock_nanosleep(CLOCK_MONOTONIC, 0, &q, NULL);
  struct timeval tv = {0, 250000};
  int n = select(0, NULL, NULL, NULL, &tv);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  clock_gettime(CLOCK_REALTIME, &wall);
  long long ns = (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
  printf("select %d, elapsed %lld.%09lld s, wall %lld.%09ld, time() %lld\n", n, ns / 1000000000, ns % 1000000000,
         (long long)wall.tv_sec, wall.tv_nsec, (long long)time(NULL));
  return 0;
}
