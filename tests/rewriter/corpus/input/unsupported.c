/* A time function libvtime has no replacement for: reported as skipped. */
#include <mqueue.h>
#include <time.h>

int drain(mqd_t q, char* buf) {
  struct timespec deadline = {0, 0};
  return (int)mq_timedreceive(q, buf, 64, NULL, &deadline);
}
