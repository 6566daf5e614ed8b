// The corpus replay: a fuzz target built without libFuzzer runs every file it is given (or
// every file of a folder it is given) through LLVMFuzzerTestOneInput once. The suite runs each
// target's committed corpus this way (fuzz/corpus/<target>/), so every input a fuzzing session
// kept, and every finding's reproducer, stays a regression test in the ordinary build.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool run_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    fprintf(stderr, "cannot read %s\n", p.c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // A copy of exactly the input's size, as libFuzzer gives it: a read past the end is caught.
  std::vector<uint8_t> data(bytes.begin(), bytes.end());
  fprintf(stderr, "%s\n", p.c_str());
  LLVMFuzzerTestOneInput(data.empty() ? nullptr : data.data(), data.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE_OR_DIR...\n(runs each input once through the fuzz target)\n", argv[0]);
    return 2;
  }
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path p(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::filesystem::path> files;
      for (auto& e : std::filesystem::recursive_directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      for (auto& f : files) {
        if (!run_file(f)) return 1;
        ++count;
      }
    } else {
      if (!run_file(p)) return 1;
      ++count;
    }
  }
  if (count == 0) {
    fprintf(stderr, "no input found in the arguments\n");
    return 1;
  }
  printf("%zu inputs ran without a finding\n", count);
  return 0;
}
