/* thread_exec: a thread that is not the main one executes a program while the main thread
 * sleeps (a known gap of the reliability issue).
 *
 * execve ends every other thread of the process, the sleeping main thread included, and the
 * executing thread takes over the process id, which is also the main thread's thread id. The
 * main thread's sleep (10 units) must end with it: under virtual time its slot must not keep a
 * deadline (the clock would stop at 10 units, where no thread waits) or a wake-up nobody takes
 * (the tree would never look idle again). The new image (this program with --after T0) checks
 * that 1 unit passed before the exec, then sleeps past the dead sleep's deadline, to 1 + 12
 * units: exactly, under virtual time.
 */
#include "check.h"

#include <pthread.h>
#include <string.h>

static int64_t g_unit;
static int64_t g_t0;
static const char* g_self;

static void* executor(void* arg) {
  (void)arg;
  vt_sleep(g_unit);
  char t0[32];
  snprintf(t0, sizeof t0, "%lld", (long long)g_t0);
  char* const argv[] = {(char*)g_self, (char*)"--after", t0, NULL};
  execv("/proc/self/exe", argv);
  vt_die(__FILE__, __LINE__, "execv", errno);
  return NULL;
}

int main(int argc, char** argv) {
  g_unit = vt_unit(20 * VT_NS_PER_MS);
  if (argc == 3 && strcmp(argv[1], "--after") == 0) {
    vt_begin("thread_exec, after the exec");
    const int64_t t0 = strtoll(argv[2], NULL, 10);
    CHECK_ELAPSED(vt_mono() - t0, g_unit);
    vt_sleep(12 * g_unit);
    CHECK_ELAPSED(vt_mono() - t0, 13 * g_unit);
    return vt_finish();
  }
  vt_begin("thread_exec");
  g_self = argv[0];
  g_t0 = vt_mono();
  pthread_t t;
  PT(pthread_create(&t, NULL, executor, NULL));
  vt_sleep(10 * g_unit); /* ended by the other thread's exec */
  printf("FATAL: the main thread's sleep outlived the exec\n");
  return 1;
}
