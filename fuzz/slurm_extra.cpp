// Fuzz target: the user's EXTRA Slurm configuration (vtime-slurm --extra FILE), then the whole
// slurm.conf built with it. Whatever the file holds, the generated configuration keeps one
// setting per line: no line of EXTRA can smuggle a second line (or a key vtime sets) into it.
#include "fuzz_support.h"

#include "slurm_conf.h"

#include <string.h>
#include <strings.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto extra = vtime::slurm::parse_extra(text, "extra.conf");
  if (!extra) {
    FUZZ_CHECK(extra.error().find("extra.conf") != std::string::npos, "the error does not name the file: %s",
               extra.error().c_str());
    return 0;
  }
  vtime::slurm::ClusterSpec spec;
  spec.dir = "/tmp/vtime-slurm";
  spec.resource_ids = {0, 1, 2, 3};
  spec.base_port = 20000;
  std::string conf = vtime::slurm::make_slurm_conf(spec, *extra);
  for (auto& l : extra->lines) {
    FUZZ_CHECK(l.text.find('\n') == std::string::npos && l.text.find('\r') == std::string::npos,
               "line %d of EXTRA holds a line break", l.line);
    FUZZ_CHECK(!l.key.empty(), "line %d of EXTRA has no key", l.line);
  }
  // vtime's own settings stay as generated: each comes once, wherever on a line a key=value
  // pair could set it (Slurm reads every pair of a line, not only the first).
  static const char* const owned[] = {"SlurmctldPort", "SlurmctldHost", "StateSaveLocation",
                                      "SlurmdSpoolDir", "SlurmUser", "SlurmdUser", "ClusterName",
                                      "SlurmctldLogFile", "SlurmdLogFile"};
  for (const char* key : owned) {
    size_t n = strlen(key);
    int count = 0;
    size_t line_start = 0;
    while (line_start < conf.size()) {
      size_t line_end = conf.find('\n', line_start);
      if (line_end == std::string::npos) line_end = conf.size();
      std::string_view line(conf.data() + line_start, line_end - line_start);
      bool partition = strncasecmp(line.data(), "PartitionName=", 14) == 0 ||
                       strncasecmp(line.data(), "NodeSet=", 8) == 0 || strncasecmp(line.data(), "NodeName=", 9) == 0;
      for (size_t i = 0; !partition && i + n < line.size(); ++i) {
        bool token_start = i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t';
        if (token_start && strncasecmp(line.data() + i, key, n) == 0 && line[i + n] == '=') ++count;
      }
      line_start = line_end + 1;
    }
    FUZZ_CHECK(count == 1, "%s set %d times:\n%s", key, count, conf.c_str());
  }
  return 0;
}
