// The run's private network (bridges/private_network.h), checked with iproute2's `ip` and with
// the kernel's own counters. Each case runs in a child process: entering a namespace is for good.
#include "private_network.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

namespace vtime::bridges {
namespace {

constexpr int kSkip = 77;

std::string run(const std::string& command) {
  std::string out;
  if (FILE* p = popen((command + " 2>&1").c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  return out;
}

std::string netns_of(pid_t pid) {
  char buf[64] = {0};
  ssize_t n = readlink(("/proc/" + std::to_string(pid) + "/ns/net").c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// The namespace's count of acknowledgements the kernel sent from its delayed-ACK timer.
long delayed_acks() {
  std::ifstream f("/proc/self/net/netstat");
  std::string names, values;
  while (std::getline(f, names) && std::getline(f, values)) {
    if (names.rfind("TcpExt:", 0) != 0) continue;
    std::istringstream n(names), v(values);
    std::string name, value;
    while (n >> name && v >> value) {
      if (name == "DelayedACKs") return std::stol(value);
    }
  }
  return -1;
}

// A request/answer exchange on 127.0.0.1 whose last answers come 100 ms after their requests: a
// loopback that delays acknowledgements (40 ms and more) acknowledges those requests from its
// timer, once the first segments of the connection (acknowledged at once by any loopback: the
// kernel's quick-ack start) are past. Returns how many acknowledgements were delayed, or -1 when
// the exchange failed.
long delayed_acks_of_slow_exchange() {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return -1;
  }
  int client = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return -1;
  int server = accept(listener, nullptr, nullptr);
  if (server < 0) return -1;
  int one = 1;
  setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  long before = delayed_acks();
  char buf[100] = {0};
  for (int i = 0; i < 40; ++i) {
    if (send(client, buf, sizeof buf, 0) != sizeof buf || recv(server, buf, sizeof buf, MSG_WAITALL) != sizeof buf) return -1;
    if (i >= 34) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (send(server, buf, sizeof buf, 0) != sizeof buf || recv(client, buf, sizeof buf, MSG_WAITALL) != sizeof buf) return -1;
  }
  long after = delayed_acks();
  close(client);
  close(server);
  close(listener);
  return before < 0 || after < 0 ? -1 : after - before;
}

// Runs `body` in a child that first enters a private network; "" from it is success, kSkip (no
// privileges for a namespace) skips the test.
void in_private_network(const std::function<std::string()>& body) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    Network net = enter_private_network();
    std::string error;
    int code = 0;
    if (net.where == Network::kHost) {
      error = net.why;
      code = kSkip;
    } else if (net.where == Network::kBroken || !net.why.empty()) {
      error = "enter_private_network: " + net.why;
      code = 1;
    } else {
      error = body();
      code = error.empty() ? 0 : 1;
    }
    (void)!write(fds[1], error.data(), error.size());
    _exit(code);
  }
  close(fds[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) message.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == kSkip) GTEST_SKIP() << "no network namespace here: " << message;
  EXPECT_EQ(WEXITSTATUS(status), 0) << message;
}

TEST(PrivateNetwork, OwnNamespaceWithLoopbackUpAndQuickackRoutes) {
  std::string parent_ns = netns_of(getpid());
  in_private_network([&]() -> std::string {
    if (netns_of(getpid()) == parent_ns) return "still in the parent's network namespace " + parent_ns;
    std::string link = run("ip link show lo");
    if (link.find("UP") == std::string::npos) return "lo is not up:\n" + link;
    std::string routes = run("ip -4 route show table local");
    for (const char* dst : {"local 127.0.0.0/8 ", "local 127.0.0.1 "}) {
      size_t at = routes.find(dst);
      if (at == std::string::npos) return std::string("no route ") + dst + "in:\n" + routes;
      std::string line = routes.substr(at, routes.find('\n', at) - at);
      if (line.find("quickack 1") == std::string::npos) return "no quickack on: " + line;
    }
    return "";
  });
}

// What the namespace is for: no acknowledgement waits for TCP's real-time timer. The same
// exchange after `ip route change` took quickack off shows that the test can tell.
TEST(PrivateNetwork, AcknowledgesAtOnceWhereTheHostsLoopbackWouldDelay) {
  in_private_network([]() -> std::string {
    long quick = delayed_acks_of_slow_exchange();
    if (quick != 0) return "delayed acknowledgements in the private network: " + std::to_string(quick);
    run("ip route change local 127.0.0.0/8 dev lo proto kernel scope host src 127.0.0.1 table local");
    run("ip route change local 127.0.0.1 dev lo proto kernel scope host src 127.0.0.1 table local");
    long usual = delayed_acks_of_slow_exchange();
    if (usual <= 0) return "the usual loopback delayed no acknowledgement (" + std::to_string(usual) + "): the check cannot tell";
    return "";
  });
}

}  // namespace
}  // namespace vtime::bridges
