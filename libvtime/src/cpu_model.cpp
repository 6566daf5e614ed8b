// Names of the CPU-time models (see vtime/cpu_model.h).
#include <vtime/cpu_model.h>

namespace vtime {

std::optional<abi::CpuModel> parse_cpu_model(std::string_view name) {
  if (name == "zero") return abi::kCpuZero;
  if (name == "calls") return abi::kCpuCalls;
  if (name == "real") return abi::kCpuReal;
  return std::nullopt;
}

const char* cpu_model_name(uint32_t model) {
  switch (model) {
    case abi::kCpuZero: return "zero";
    case abi::kCpuCalls: return "calls";
    case abi::kCpuReal: return "real";
    default: return "?";
  }
}

std::string cpu_model_error(std::string_view name) {
  return "--cpu-model: unknown model '" + std::string(name) +
         "'; the models are zero (computation takes no time), calls (clock reads and non-blocking calls "
         "cost --cpu-cost each; the default) and real (the clock runs with real time while the tree is busy)";
}

}  // namespace vtime
