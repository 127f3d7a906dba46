// `aotfuzz fmt FILE`: parse, verify and print a module in the canonical text form.
#include <iostream>

#include "cli/common.h"
#include "ir/printer.h"

namespace aotfuzz::cli {

Command register_fmt(CLI::App& parent) {
  struct Opts {
    std::string file;
    bool types = false;
  };
  auto opts = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand("fmt", "Parse, verify and print a module canonically");
  c.app->add_option("FILE", opts->file, "Relay text file (- reads standard input)")->required();
  c.app->add_flag("--types", opts->types, "Print /* ty=... */ comments");
  c.run = [opts] {
    ir::Module m = load_module(opts->file);
    ir::PrintOptions po;
    po.type_comments = opts->types;
    std::cout << ir::print_module(m, po);
    return kOk;
  };
  return c;
}

}  // namespace aotfuzz::cli
