// vtime-tracer: started by spawn_in_session beside the wrapped tree (see tracer.h); not meant to
// be run by hand.
#include "tracer.h"

#include <vtime/session.h>

#include <sys/prctl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

int main() {
  const char* spec = getenv(vtime::kSessionEnv);
  if (!spec || !*spec) {
    fprintf(stderr, "vtime-tracer: started by vtime, not by hand (no %s)\n", vtime::kSessionEnv);
    return 2;
  }
  try {
    vtime::Session session = vtime::Session::attach(spec);
    vtime::tracer::Tracer t(session, spec);
    return t.run();
  } catch (const std::exception& e) {
    fprintf(stderr, "vtime-tracer: %s\n", e.what());
    return 1;
  }
}
