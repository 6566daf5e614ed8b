/* A syntax error: the file is left untouched and reported. */
#include <unistd.h>

int main(void) {
  sleep(1)
  return 0;
}
