#include "vtime/protocol/events.h"

#include <array>
#include <type_traits>

namespace vtime::protocol {

namespace {
constexpr std::array<std::pair<JobState, std::string_view>, 4> kStates{{
    {JobState::completed_successfully, "COMPLETED_SUCCESSFULLY"},
    {JobState::completed_failed, "COMPLETED_FAILED"},
    {JobState::completed_walltime_reached, "COMPLETED_WALLTIME_REACHED"},
    {JobState::completed_killed, "COMPLETED_KILLED"},
}};

template <class T>
constexpr std::string_view name_of() {
  if constexpr (std::is_same_v<T, SimulationBegins>) return "SIMULATION_BEGINS";
  else if constexpr (std::is_same_v<T, SimulationEnds>) return "SIMULATION_ENDS";
  else if constexpr (std::is_same_v<T, JobSubmitted>) return "JOB_SUBMITTED";
  else if constexpr (std::is_same_v<T, JobCompleted>) return "JOB_COMPLETED";
  else if constexpr (std::is_same_v<T, JobKilled>) return "JOB_KILLED";
  else if constexpr (std::is_same_v<T, RequestedCall>) return "REQUESTED_CALL";
  else if constexpr (std::is_same_v<T, Notify>) return "NOTIFY";
  else if constexpr (std::is_same_v<T, ExecuteJob>) return "EXECUTE_JOB";
  else if constexpr (std::is_same_v<T, RejectJob>) return "REJECT_JOB";
  else if constexpr (std::is_same_v<T, KillJob>) return "KILL_JOB";
  else if constexpr (std::is_same_v<T, CallMeLater>) return "CALL_ME_LATER";
  else return "";
}
}  // namespace

std::string_view to_string(JobState s) {
  for (const auto& [state, name] : kStates)
    if (state == s) return name;
  return "COMPLETED_FAILED";
}

std::optional<JobState> job_state_from_string(std::string_view s) {
  for (const auto& [state, name] : kStates)
    if (name == s) return state;
  return std::nullopt;
}

std::string_view type_name(const Payload& p) {
  return std::visit(
      [](const auto& v) -> std::string_view {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, OtherEvent>) return v.type;
        else return name_of<T>();
      },
      p);
}

}  // namespace vtime::protocol
