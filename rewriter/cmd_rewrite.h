// `vtime rewrite`: registration of the subcommand (the same declaration belongs in
// cli/command.h once the lead adds the rewrite line to cli/main.cpp).
#pragma once

#include "command.h"

namespace vtime::cli {

Subcommand register_rewrite(CLI::App& root);

}  // namespace vtime::cli
