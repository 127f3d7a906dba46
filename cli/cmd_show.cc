// `aotfuzz show FILE --dot | --tvm-pytest`: pictures of a module (Graphviz DOT) and upstream
// repros (a pytest file in the style of TVM's AoT BYOC tests), both on stdout.
#include <iostream>

#include "bundles/replay.h"
#include "cli/cmd_fuzz.h"
#include "cli/common.h"
#include "ir/dot.h"
#include "oracle/case_flags.h"
#include "oracle/verdict.h"
#include "systems/systems.h"
#include "tvm/pytest_export.h"

namespace aotfuzz::cli {

Command register_show(CLI::App& parent) {
  struct Opts {
    std::string file;
    bool dot = false;
    bool pytest = false;
    std::string name;
    PipelineFlags flags;
  };
  auto opts = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand(
      "show", "Render a module: --dot for Graphviz, --tvm-pytest for an upstream TVM test");
  c.app->add_option("FILE", opts->file, "Relay text file")->required();
  auto* dot =
      c.app->add_flag("--dot", opts->dot, "Print Graphviz DOT (regions and functions as clusters)");
  c.app
      ->add_flag("--tvm-pytest", opts->pytest,
                 "Print a self-contained pytest file in the style of TVM's AoT BYOC tests")
      ->excludes(dot);
  c.app->add_option("--name", opts->name, "--tvm-pytest: test name (default: from the file name)");
  add_pipeline_flags(c.app, opts->flags, oracle::kShow);
  CLI::App* app = c.app;
  c.run = [opts, app] {
    // The pipeline flags shape the pytest file (and override its replay line); a picture of the
    // file's module ignores them.
    const std::vector<std::string> replay_overrides = {"--merge",
                                                       "--mod-name",
                                                       "--api",
                                                       "--interface",
                                                       "--storage-reuse",
                                                       "--max-fuse-depth",
                                                       "--inject",
                                                       "--usmp",
                                                       "--usmp-algorithm",
                                                       "--pools",
                                                       "--workspace-io",
                                                       "--workspace-alignment",
                                                       "--constant-alignment",
                                                       "--link-params"};
    if (opts->dot) {
      std::vector<std::string> ignored = replay_overrides;
      ignored.insert(ignored.end(), {"--check-num-args", "--memory-budget"});
      for (const auto& f : ignored) {
        if (given(app, f)) {
          throw CommandError(kBadInput, "show: " + f +
                                            " applies to --tvm-pytest; --dot draws the file's "
                                            "module as it is");
        }
      }
    }
    ir::Module m = load_module(opts->file);
    if (opts->dot) {
      std::cout << ir::to_dot(m);
      return kOk;
    }
    if (!opts->pytest)
      throw CommandError(kBadInput, "show: choose an output: --dot or --tvm-pytest");
    // The memory configuration is TVM's (the builtin pipeline refuses it): the release the file
    // runs on judges it.
    oracle::CaseOptions options = case_options(opts->flags.words, /*system_refusals=*/false);
    tvm::PytestInfo info;
    const std::string text = read_file(opts->file);
    bool explicit_flags = false;
    for (const auto& f : replay_overrides) {
      explicit_flags |= given(app, f);
    }
    try {
      for (const auto& line : bundles::parse_replay_lines(text, opts->file)) {
        // The file's first finding line says how it fails, unless flags were given.
        if (bundles::signature_matches("pass", line.expected)) continue;
        if (!explicit_flags) {
          options = oracle::case_options_from_words(oracle::split_flags(line.flags),
                                                    systems::make_system, false,
                                                    /*system_refusals=*/false);
          explicit_flags = true;
        }
        info.notes.push_back("aotfuzz: with `" + line.flags + "` the pipeline gives " +
                             line.expected);
      }
    } catch (const bundles::ReplayError& e) {
      throw CommandError(kBadInput, e.what());
    }
    // Carry the file's own header (origin, notes) into the test.
    std::size_t pos = 0;
    while (pos < text.size() && text.compare(pos, 2, "//") == 0) {
      std::size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      std::string line = text.substr(pos + 2, end - pos - 2);
      if (!line.empty() && line[0] == ' ') line.erase(0, 1);
      info.notes.push_back(line);
      pos = end + 1;
    }
    info.notes.push_back("replay: aotfuzz run " + opts->file + " " + oracle::replay_flags(options));
    std::string stem = opts->file.substr(opts->file.find_last_of('/') + 1);
    if (auto dotpos = stem.find('.'); dotpos != std::string::npos) stem.resize(dotpos);
    info.name = opts->name.empty() ? stem : opts->name;
    try {
      std::cout << tvm::tvm_pytest(m, options, info);
    } catch (const tvm::PytestError& e) {
      throw CommandError(kBadInput, std::string("show: ") + e.what());
    }
    return kOk;
  };
  return c;
}

}  // namespace aotfuzz::cli
