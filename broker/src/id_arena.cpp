#include "id_arena.h"

#include <cstring>
#include <stdexcept>

namespace vtime::broker {

uint32_t IdArena::load_length(const char* p) {
  uint32_t n;
  std::memcpy(&n, p, sizeof n);
  return n;
}

IdArena::Handle IdArena::add(std::string_view id) {
  if (id.size() > UINT32_MAX - 8) throw std::length_error("a job id longer than 4 GiB");
  const bool is_long = id.size() >= kLong;
  const size_t need = (is_long ? 1 + sizeof(uint32_t) : 1) + id.size();
  if (blocks_.empty() || blocks_.back().size - blocks_.back().used < need) {
    if (blocks_.size() > 0xffff) throw std::length_error("more than 4 GiB of job ids");
    // An id longer than a block gets a block of its own.
    const size_t size = need > kBlockSize ? need : kBlockSize;
    blocks_.push_back(Block{std::make_unique<char[]>(size), 0, size});
  }
  Block& b = blocks_.back();
  const Handle h = static_cast<Handle>((blocks_.size() - 1) << 16 | b.used);
  char* p = b.data.get() + b.used;
  if (is_long) {
    *p++ = static_cast<char>(kLong);
    const auto n = static_cast<uint32_t>(id.size());
    std::memcpy(p, &n, sizeof n);
    p += sizeof n;
  } else {
    *p++ = static_cast<char>(id.size());
  }
  if (!id.empty()) std::memcpy(p, id.data(), id.size());
  b.used += need;
  return h;
}

}  // namespace vtime::broker
