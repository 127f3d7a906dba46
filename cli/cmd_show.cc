// `aotfuzz show FILE --dot`: pictures of a module (Graphviz DOT on stdout).
#include <iostream>

#include "cli/common.h"
#include "ir/dot.h"

namespace aotfuzz::cli {

Command register_show(CLI::App& parent) {
  struct Opts {
    std::string file;
    bool dot = false;
  };
  auto opts = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand("show", "Render a module: --dot for Graphviz");
  c.app->add_option("FILE", opts->file, "Relay text file")->required();
  c.app->add_flag("--dot", opts->dot, "Print Graphviz DOT (regions and functions as clusters)");
  c.run = [opts] {
    ir::Module m = load_module(opts->file);
    if (!opts->dot) throw CommandError(kBadInput, "show: choose an output, e.g. --dot");
    std::cout << ir::to_dot(m);
    return kOk;
  };
  return c;
}

}  // namespace aotfuzz::cli
