// User functions and members named like the targets: never touched.
#include <unistd.h>

#include <chrono>

namespace mine {
int sleep(int seconds) { return seconds; }
struct clock {
  static int now() { return 42; }
};
}  // namespace mine

class Timer {
 public:
  int now() const { return 1; }
  void sleep_for(int) {}
  bool wait_for(int, int) { return true; }
  bool try_lock_for(int) { return false; }
};

struct steady_clock {  // a user type with a std-like name, in the global namespace
  static int now() { return 7; }
};

int main() {
  Timer t;
  t.sleep_for(mine::sleep(1));
  t.wait_for(1, 2);
  t.try_lock_for(3);
  return mine::clock::now() + t.now() + steady_clock::now();
}
