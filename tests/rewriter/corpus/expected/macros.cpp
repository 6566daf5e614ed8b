// Macros: arguments are rewritten where they are spelled; a #define is rewritten only when
// every expansion calls the library function.
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vtime/std.h>

#define TWICE(stmt) \
  do {              \
    stmt;           \
    stmt;           \
  } while (0)
#define STEADY_NOW() vtime::chrono::steady_clock::now()
#define PAUSE() sleep(0)

namespace quiet {
unsigned sleep(unsigned) { return 0; }
inline void rest() { PAUSE(); }  // this expansion calls quiet::sleep
}  // namespace quiet

int main() {
  TWICE(vtime_usleep(1));
  TWICE(vtime::this_thread::sleep_for(std::chrono::nanoseconds(1)));
  auto a = STEADY_NOW();
  auto b = STEADY_NOW();
  PAUSE();
  quiet::rest();
  return static_cast<int>((b - a).count() < 0);
}
