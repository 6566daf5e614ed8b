// `vtime rewrite`: the subcommand's options, help and action, as vtime-rewrite (main_rewrite.cpp)
// registers them. `vtime rewrite` (cli/cmd_rewrite.cpp) runs that executable.
#pragma once

#include "command.h"

namespace vtime::cli {

Subcommand register_rewrite(CLI::App& root);

}  // namespace vtime::cli
