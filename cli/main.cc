// aotfuzz: the command-line front end. Thin: each subcommand lives in its own cmd_*.cc.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/common.h"

namespace {

// Every subcommand, in the order `aotfuzz --help` lists them.
constexpr aotfuzz::cli::Registrar kCommands[] = {
    aotfuzz::cli::register_gen,
    aotfuzz::cli::register_fmt,
    aotfuzz::cli::register_show,
    aotfuzz::cli::register_compile,
    aotfuzz::cli::register_run,
    aotfuzz::cli::register_bugs,
    aotfuzz::cli::register_fuzz,
    aotfuzz::cli::register_reduce,
    aotfuzz::cli::register_replay,
    aotfuzz::cli::register_check,
    aotfuzz::cli::register_bench,
};

}  // namespace

int main(int argc, char** argv) {
  using namespace aotfuzz::cli;
  CLI::App app{"aotfuzz: differential testing and fuzzing of BYOC partitioning + AoT codegen"};
  app.require_subcommand(1);
  std::vector<Command> commands;
  for (auto reg : kCommands) commands.push_back(reg(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kOk : kBadInput;
  }
  try {
    for (auto& c : commands) {
      if (c.app->parsed()) return c.run();
    }
  } catch (const CommandError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return e.code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "aotfuzz: internal error: %s\n", e.what());
    return kInternal;
  }
  return kBadInput;
}
