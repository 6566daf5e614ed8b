#include "file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace vtime::rewriter {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file_atomic(const std::string& path, const std::string& text) {
  auto fail = [&](const char* what) {
    throw std::runtime_error(std::string(what) + " " + path + ": " + std::strerror(errno));
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail("cannot stat");
  std::vector<char> tmpl(path.begin(), path.end());
  const std::string suffix = ".vtime-XXXXXX";
  tmpl.insert(tmpl.end(), suffix.begin(), suffix.end());
  tmpl.push_back('\0');
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) fail("cannot create a temporary file next to");
  const std::string tmp(tmpl.data());
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      fail("cannot write");
    }
    done += static_cast<size_t>(n);
  }
  if (::fchmod(fd, st.st_mode & 07777) != 0 || ::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    fail("cannot finish writing");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    fail("cannot replace");
  }
}

}  // namespace vtime::rewriter
