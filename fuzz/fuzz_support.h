// What the fuzz targets share: the input as a file (for readers that take a path), a cursor
// that takes options from the input's first bytes, and the check that turns a broken invariant
// into a crash libFuzzer reports (and the corpus replay in the suite fails on).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace vtime::fuzz {

// A broken invariant is a finding: say which, with the values, and abort (libFuzzer saves the input).
#define FUZZ_CHECK(cond, ...)                                                  \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "fuzz invariant broken at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
      abort();                                                                 \
    }                                                                          \
  } while (0)

// The input as an anonymous in-memory file, reachable by path (/proc/self/fd/N): readers that
// open a path read it without touching the disk, and every open gets its own offset.
class MemFile {
 public:
  MemFile(const uint8_t* data, size_t size) {
    fd_ = memfd_create("vtime-fuzz", MFD_CLOEXEC);
    if (fd_ < 0) {
      perror("memfd_create");
      abort();
    }
    size_t done = 0;
    while (done < size) {
      ssize_t n = write(fd_, data + done, size - done);
      if (n <= 0) {
        perror("write");
        abort();
      }
      done += static_cast<size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// Takes small choices (options, modes) from the front of the input; the rest is the text.
class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() {
    if (pos_ >= size_) return 0;
    return data_[pos_++];
  }
  bool flag() { return byte() & 1; }
  std::string_view rest() const {
    return std::string_view(reinterpret_cast<const char*>(data_) + pos_, size_ - pos_);
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace vtime::fuzz
