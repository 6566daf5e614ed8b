// Compiled without FAST_PATH.
#include "shared.h"

int main() {
  shared_nap();
  return static_cast<int>(shared_wait());
}
