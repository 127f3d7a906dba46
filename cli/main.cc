// aotfuzz: the command-line front end. Thin: each subcommand lives in its own cmd_*.cc.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>

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
    aotfuzz::cli::register_findings,
    aotfuzz::cli::register_report,
    aotfuzz::cli::register_bench,
};

// CLI11's default message is two lines ("Run with --help ..." below the error); bad usage gets
// one line here, naming the command, like every other bad-input error of aotfuzz.
std::string one_line_failure(const CLI::App* app, const CLI::Error& e) {
  std::string where = "aotfuzz";
  for (const CLI::App* sub : app->get_subcommands()) where += " " + sub->get_name();
  return where + ": " + e.what() + " (see " + where + " --help)\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace aotfuzz::cli;
  // A closed stdout (`aotfuzz fuzz | head -2`) must not kill a campaign before its summary:
  // writes fail with EPIPE instead, and the campaign output moves to stderr (cmd_fuzz.cc).
  // Child processes get default dispositions back (oracle/process.cc, the runner).
  std::signal(SIGPIPE, SIG_IGN);
  // Named, not argv[0]: help and usage read the same however the binary was started.
  CLI::App app{"aotfuzz: differential testing and fuzzing of BYOC partitioning + AoT codegen",
               "aotfuzz"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("aotfuzz ") + AOTFUZZ_VERSION);
  app.failure_message(one_line_failure);
  std::vector<Command> commands;
  for (auto reg : kCommands) commands.push_back(reg(app));
  std::string help_topic;
  CLI::App* help = app.add_subcommand("help", "Print this help, or a command's: help COMMAND");
  help->add_option("COMMAND", help_topic, "A command of this list");
  // CLI11 reports a mistyped command as "A subcommand is required"; name the word instead.
  if (argc > 1 && argv[1][0] != '-' &&
      app.get_subcommands([&](const CLI::App* sub) { return sub->check_name(argv[1]); }).empty()) {
    std::fprintf(stderr, "aotfuzz: no command '%s' (see aotfuzz --help)\n", argv[1]);
    return kBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kOk : kBadInput;
  }
  if (help->parsed()) {
    if (help_topic.empty()) {
      // app.help() would describe the parsed subcommand, `help` itself.
      std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
      return kOk;
    }
    for (auto& c : commands) {
      if (c.app->get_name() == help_topic) {
        std::cout << c.app->help(app.get_name());
        return kOk;
      }
    }
    std::fprintf(stderr, "aotfuzz help: no command '%s' (see aotfuzz --help)\n",
                 help_topic.c_str());
    return kBadInput;
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
