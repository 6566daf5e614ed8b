// `vtime rewrite`'s options, help and action, as vtime-rewrite (rewrite_tool_main.cpp) registers
// them over the rewriter library (rewriter/). `vtime rewrite` (cmd_rewrite.cpp) runs that
// executable, which keeps libclang out of `vtime`.
#pragma once

#include "command.h"

namespace vtime::cli {

Subcommand register_rewrite_tool(CLI::App& root);

}  // namespace vtime::cli
