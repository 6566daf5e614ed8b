// Job ids stored once, back to back, in fixed-size blocks: a million-job run keeps every id it
// saw (to recognise a decision about an ended job) without a string object per id, and without
// the doubling of one growing buffer (which at its peak held three times the text during a copy).
//
// Example:
//     IdArena a;
//     IdArena::Handle h = a.add("w0!12");
//     a.view(h);   // "w0!12"
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace vtime::broker {

class IdArena {
 public:
  // block << 16 | position in the block: 4 bytes per id in the job book's tables. An id longer
  // than a block gets a block of its own (at position 0); 65,536 blocks (4 GiB of ids) at most.
  using Handle = uint32_t;

  Handle add(std::string_view id);
  std::string_view view(Handle h) const {
    const char* p = blocks_[h >> 16].data.get() + (h & 0xffffu);
    const auto first = static_cast<unsigned char>(*p);
    if (first != kLong) return {p + 1, first};
    return {p + 1 + sizeof(uint32_t), load_length(p + 1)};
  }

 private:
  static constexpr size_t kBlockSize = 64 * 1024;
  struct Block {
    std::unique_ptr<char[]> data;
    size_t used = 0, size = 0;
  };
  // Each id is its length then its bytes (ids may hold any byte): one byte for a length below
  // kLong, else kLong and four bytes.
  static constexpr unsigned char kLong = 0xff;
  static uint32_t load_length(const char* p);

  std::vector<Block> blocks_;
};

}  // namespace vtime::broker
