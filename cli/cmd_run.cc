// `aotfuzz run FILE`: one differential test; prints the verdict, and on a finding what differs
// and the command that replays it.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli/common.h"
#include "bundles/replay.h"
#include "host/shell_words.h"
#include "host/tempdir.h"
#include "oracle/oracle.h"
#include "oracle/verdict.h"
#include "reduce/reduce_file.h"

namespace aotfuzz::cli {

Command register_run(CLI::App& parent) {
  struct Opts {
    std::string file;
    PipelineFlags flags;
    bool json = false;
    bool keep = false;
  };
  auto opts = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand("run", "Run one differential test and print the verdict");
  c.app->add_option("FILE", opts->file, "Annotated Relay text file")->required();
  add_pipeline_flags(c.app, opts->flags, oracle::kRun);
  c.app->add_flag("--json", opts->json, "Print the verdict as JSON");
  c.app->add_flag("--keep", opts->keep, "Keep the generated sources and program (prints the dir)");
  CLI::App* app = c.app;
  c.run = [opts, app] {
    ir::Module m;
    oracle::CaseOptions co = case_options(opts->flags);
    try {
      m = load_module(opts->file);
      // A repro keeps its flags in its header (reduced.relay, corpus files): without flags on
      // the command line, its first finding line's are the ones it was found with.
      if (!any_pipeline_flag(app) && opts->file != "-" && opts->file != "/dev/stdin") {
        std::vector<bundles::ReplayLine> lines;
        try {
          lines = bundles::parse_replay_lines(read_file(opts->file), opts->file);
        } catch (const bundles::ReplayError& e) {
          throw CommandError(kBadInput, std::string("run: ") + e.what());
        }
        if (auto line = bundles::first_finding_line(lines)) {
          // Settings given (--sut, --no-run, ...) apply over the line's flags.
          const std::string flags = line->flags + setting_flags(opts->flags);
          try {
            co = systems::parse_case_flags(flags);
          } catch (const oracle::FlagError& e) {
            throw CommandError(kBadInput, "run: " + opts->file + ":" + std::to_string(line->line) +
                                              ": " + e.what());
          }
          std::fprintf(stderr, "run: using the flags of %s:%d: %s\n", opts->file.c_str(),
                       line->line, flags.c_str());
        }
      }
    } catch (const CommandError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      const oracle::Verdict invalid{aot::Stage::kAnnotated, oracle::InvalidInput{e.what()}};
      if (opts->json) {
        std::cout << oracle::to_json(invalid).dump(2) << "\n";
      } else {
        // The same two lines as every other verdict, so scripts read one shape.
        std::printf("verdict: invalid-input\n");
        std::printf("signature: %s\n", oracle::signature(invalid).c_str());
      }
      return static_cast<int>(kBadInput);
    }
    co.keep_files = opts->keep;
    oracle::CaseResult r = oracle::run_case(m, co);
    const std::string replay =
        "aotfuzz run " + host::shell_quote_path(opts->file) + " " + oracle::replay_flags(co);
    if (opts->json) {
      // Everything on stdout is one JSON object, so the replay command is a field of it.
      nlohmann::json j = oracle::to_json(r.verdict);
      if (oracle::is_finding(r.verdict)) j["replay"] = replay;
      std::cout << j.dump(2) << "\n";
    } else {
      std::printf("verdict: %s\n", oracle::summary(r.verdict).c_str());
      std::printf("signature: %s\n", oracle::signature(r.verdict).c_str());
      if (oracle::is_finding(r.verdict)) std::printf("replay: %s\n", replay.c_str());
    }
    if (opts->keep && r.work_dir.empty() && !r.files.empty()) {
      // Judged before anything was compiled (a static check): keep the C it was judged on.
      host::TempDir dir("aotfuzz-case");
      dir.keep();
      for (const auto& [name, text] : r.files) {
        std::ofstream out(dir.file(name), std::ios::binary);
        out << text;
        out.close();
        if (!out) throw CommandError(kInternal, "cannot write " + dir.file(name).string());
      }
      r.work_dir = dir.path().string();
    }
    if (opts->keep && !r.work_dir.empty()) {
      // Temporary files live in memory when /dev/shm is usable (host::temp_root): say so, or a
      // user reboots and loses what they kept.
      const bool in_memory = r.work_dir.rfind("/dev/shm/", 0) == 0;
      std::fprintf(stderr, "kept %s%s\n", r.work_dir.c_str(),
                   in_memory ? " (in memory, /dev/shm: gone at reboot; copy it, or set TMPDIR "
                               "to a directory on disk)"
                             : "");
    }
    return oracle::exit_code(r.verdict);
  };
  return c;
}

}  // namespace aotfuzz::cli
