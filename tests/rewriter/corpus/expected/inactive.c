/* A branch no configuration of this build compiles: reported, not rewritten. */
#include <unistd.h>

int main(void) {
#ifdef VTIME_CORPUS_NEVER_DEFINED
  sleep(5);
#endif
  return 0;
}
