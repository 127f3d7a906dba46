// `aotfuzz gen`: print random annotated graphs (Relay text), each headed by its replay command.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/common.h"
#include "generator/builder.h"
#include "generator/mutator.h"
#include "generator/policy.h"
#include "generator/stats.h"
#include "host/shell_words.h"
#include "ir/printer.h"
#include "ir/verify.h"

namespace aotfuzz::cli {

Command register_gen(CLI::App& parent) {
  struct Opts {
    std::uint64_t seed = 1;
    int size = 0;
    int count = 1;
    bool swarm = false;
    bool types = false;
    bool summary = false;
    bool list_knobs = false;
    std::string out_dir;
    std::vector<std::string> knobs;
    std::string mutate;
  };
  auto opts = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand("gen", "Print random annotated graphs");
  c.app->add_option("--seed", opts->seed, "Seed of the first graph (graph k uses seed+k)")
      ->transform(unsigned_decimal(0));
  c.app->add_option("--count", opts->count, "How many graphs")->check(CLI::Range(1, 1000000));
  c.app->add_flag("--swarm", opts->swarm, "Swarm mode: switch features on/off per graph");
  c.app->add_flag("--types", opts->types, "Print /* ty=... */ comments");
  c.app->add_flag("--summary", opts->summary, "Print a feature summary to stderr");
  add_policy_flags(c.app, opts->knobs, opts->size);
  c.app->add_flag("--list-knobs", opts->list_knobs,
                  "List the policy knobs with their defaults and exit");
  c.app->add_option("--mutate", opts->mutate,
                    "Print mutants of this graph instead (graph k: the mutant for seed+k, as "
                    "`fuzz --corpus` makes them)");
  c.app->add_option("--out-dir", opts->out_dir,
                    "Write each graph to DIR/gen-<seed>.relay instead of stdout");
  CLI::App* app = c.app;
  c.run = [opts, app] {
    if (opts->list_knobs) {
      const generator::GenPolicy defaults;
      std::size_t name_width = 0, value_width = 0;
      for (const auto& name : generator::knob_names()) {
        name_width = std::max(name_width, name.size());
        value_width = std::max(value_width, generator::get_knob(defaults, name).size());
      }
      std::printf("%-*s %-*s %s\n", static_cast<int>(name_width), "knob",
                  static_cast<int>(value_width), "default", "what");
      for (const auto& name : generator::knob_names()) {
        std::printf("%-*s %-*s %s\n", static_cast<int>(name_width), name.c_str(),
                    static_cast<int>(value_width), generator::get_knob(defaults, name).c_str(),
                    generator::knob_help(name).c_str());
      }
      return kOk;
    }
    if (!opts->out_dir.empty()) {
      check_output_dir(opts->out_dir, "--out-dir", "gen");
      std::error_code ec;
      std::filesystem::create_directories(opts->out_dir, ec);
      if (ec)
        throw CommandError(kBadInput, "gen: --out-dir " + opts->out_dir + ": " + ec.message());
    }
    const generator::GenPolicy policy = policy_from_flags(opts->knobs, opts->size, "gen");
    std::optional<ir::Module> original;
    if (!opts->mutate.empty()) {
      for (const char* flag : {"--swarm", "--knob", "--size"}) {
        if (given(app, flag)) {
          throw CommandError(kBadInput, std::string("gen: --mutate takes no ") + flag +
                                            " (a mutant depends on the seed alone)");
        }
      }
      original = load_module(opts->mutate);
    }
    ir::PrintOptions po;
    po.type_comments = opts->types;
    std::size_t ops = 0, regions = 0, multi = 0, tuples = 0, host_between = 0;
    for (int k = 0; k < opts->count; ++k) {
      const std::uint64_t seed = opts->seed + static_cast<std::uint64_t>(k);
      std::ostringstream text;
      ir::Module m;
      if (original) {
        m = generator::mutant(*original, seed);
        text << "// aotfuzz gen --seed " << seed << " --mutate "
             << host::shell_quote_path(opts->mutate) << "\n";
      } else {
        ir::Rng rng(seed);
        generator::GenPolicy p = opts->swarm ? generator::swarm(policy, rng) : policy;
        m = generator::generate(p, rng);
        text << "// aotfuzz gen --seed " << seed << (opts->swarm ? " --swarm" : "")
             << knob_flags(policy) << "\n";
      }
      ir::verify(m);
      text << ir::print_module(m, po) << "\n";
      if (opts->out_dir.empty()) {
        std::cout << text.str();
      } else {
        const auto path =
            std::filesystem::path(opts->out_dir) / ("gen-" + std::to_string(seed) + ".relay");
        std::ofstream out(path, std::ios::binary);
        out << text.str();
        out.close();
        if (!out) throw CommandError(kInternal, "gen: cannot write " + path.string());
      }
      if (opts->summary) {
        auto s = generator::graph_stats(m);
        ops += s.ops;
        regions += s.regions;
        multi += s.multi_output_regions;
        tuples += s.tuples;
        host_between += s.host_ops_between_regions;
      }
    }
    if (opts->summary) {
      std::fprintf(
          stderr,
          "gen: seed %llu, %d graphs: %zu ops, %zu regions (%zu multi-output), %zu tuples, "
          "%zu host ops between regions\n",
          static_cast<unsigned long long>(opts->seed), opts->count, ops, regions, multi, tuples,
          host_between);
    }
    return kOk;
  };
  return c;
}

}  // namespace aotfuzz::cli
