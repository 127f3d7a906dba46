// aotfuzz: the command-line front end. Thin: each subcommand lives in its own cmd_*.cc.
#include <CLI/CLI.hpp>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>

#include "aotfuzz_commit.h"
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
    aotfuzz::cli::register_merge,
    aotfuzz::cli::register_bisect,
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

// One style for a repeated option across every command: the last one wins (as in GNU tools and
// libFuzzer), so that a script can put defaults before the user's arguments. Options that
// collect (--knob, --inject, paths) keep every value.
void last_one_wins(CLI::App* app) {
  for (CLI::Option* opt : app->get_options()) {
    if (opt->get_items_expected_max() == 1) {
      opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) last_one_wins(sub);
}

// Every error names its command the same way: "aotfuzz CMD: what", except a message about a
// place in an input file, which starts with that place (file:line:col), as compilers print it.
std::string styled_error(const std::string& command, std::string message) {
  const std::string full = "aotfuzz " + command + ": ";
  for (const std::string& prefix : {full, std::string("aotfuzz: "), command + ": "}) {
    if (message.rfind(prefix, 0) == 0) {
      message = message.substr(prefix.size());
      break;
    }
  }
  const std::size_t colon = message.find(':');
  const std::size_t space = message.find(' ');
  const bool at_a_place =
      colon != std::string::npos && colon > 0 && (space == std::string::npos || colon < space) &&
      colon + 1 < message.size() && std::isdigit(static_cast<unsigned char>(message[colon + 1]));
  return at_a_place ? message : full + message;
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
  app.footer(
      "Exit codes (every command):\n"
      "  0    passed: no finding, or nothing to report\n"
      "  1    a finding (a test failed, a bundle reproduces, a replay line differs)\n"
      "  2    bad input: a flag, a file or a graph the command refuses (one line says why)\n"
      "  3    the environment failed (no C compiler, a TVM build that does not import, a disk\n"
      "       that cannot be written): nothing was judged\n"
      "  130  interrupted (SIGINT or SIGTERM) before the work ended");
  app.set_version_flag("--version", std::string("aotfuzz ") + AOTFUZZ_VERSION + " (commit " +
                                        AOTFUZZ_COMMIT + ", " + AOTFUZZ_BUILD_TYPE + " build)");
  app.failure_message(one_line_failure);
  std::vector<Command> commands;
  for (auto reg : kCommands) commands.push_back(reg(app));
  last_one_wins(&app);
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
  std::string command;
  try {
    for (auto& c : commands) {
      if (!c.app->parsed()) continue;
      command = c.app->get_name();
      return c.run();
    }
  } catch (const CommandError& e) {
    std::fprintf(stderr, "%s\n", styled_error(command, e.what()).c_str());
    return e.code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "aotfuzz: internal error: %s\n", e.what());
    return kInternal;
  }
  return kBadInput;
}
