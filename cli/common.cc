// File loading, error mapping, and the pipeline and policy flags shared by the subcommands.
#include "cli/common.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "aot/bugs.h"
#include "generator/policy.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "ir/verify.h"
#include "oracle/tvm_driver.h"

namespace aotfuzz::cli {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CommandError(kBadInput, path + ": cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw CommandError(kBadInput, path + ": read error");
  return ss.str();
}

ir::Module load_module(const std::string& path) {
  std::string text = read_file(path);
  try {
    ir::Module m = ir::parse_module(text, path);
    ir::verify(m);
    return m;
  } catch (const ir::ParseError& e) {
    throw CommandError(kBadInput, e.what());
  } catch (const ir::Error& e) {
    throw CommandError(kBadInput, path + ": error: " + e.what());
  }
}

void add_pipeline_flags(CLI::App* app, PipelineFlags& f, bool toolchain) {
  app->add_flag("--merge,!--no-merge", f.merge, "Run MergeCompilerRegions (default on)");
  app->add_option("--mod-name", f.mod_name, "Module name used in generated symbols");
  app->add_option("--api", f.api, "Kernel calling convention")
      ->check(CLI::IsMember({"packed", "unpacked"}));
  app->add_option("--interface", f.interface, "Entry point interface (c needs --api unpacked)")
      ->check(CLI::IsMember({"packed", "c"}));
  app->add_flag("--storage-reuse,!--no-storage-reuse", f.storage_reuse,
                "Reuse dead intermediates' storage (default on)");
  app->add_flag("--check-num-args", f.check_num_args, "Emit num_args checks in packed functions");
  app->add_option("--inject", f.inject, "Inject a bug from `aotfuzz bugs` (repeatable)");
  if (!toolchain) return;
  app->add_option("--cc", f.cc, "Target C compiler")->check(CLI::IsMember({"tcc", "gcc", "clang"}));
  app->add_flag("--sanitize", f.sanitize, "Build the test program with ASan+UBSan (gcc/clang)");
  app->add_option("--input-seed", f.input_seed, "Seed of the input tensors");
  app->add_option("--ulp", f.ulp, "Tolerated float difference in ulps (default 0: bitwise)");
  app->add_flag("--no-run", f.no_run,
                "Stages and static checks only, nothing compiled or run (--sut tvm: TVM "
                "partitions, the modules are compared, nothing is built)");
  app->add_option("--sut", f.sut,
                  "System under test: builtin (this project's pipeline) or tvm (Apache TVM)")
      ->check(CLI::IsMember({"builtin", "tvm"}));
  app->add_option("--tvm-home", f.tvm_home,
                  "TVM tree with its build/ for --sut tvm (default $AOTFUZZ_TVM_HOME; "
                  "scripts/tvm/build.sh prints it)");
}

oracle::Sut make_sut(const std::string& sut, const std::string& tvm_home) {
  oracle::Sut out;
  if (sut != "tvm") {
    if (!tvm_home.empty()) throw CommandError(kBadInput, "--tvm-home is for --sut tvm");
    return out;
  }
  out.kind = oracle::SutKind::kTvm;
  std::string home = tvm_home.empty() ? oracle::tvm_home_from_env().value_or("") : tvm_home;
  if (home.empty()) {
    throw CommandError(kBadInput,
                       "--sut tvm needs --tvm-home DIR or AOTFUZZ_TVM_HOME (scripts/tvm/build.sh "
                       "builds TVM and prints the directory)");
  }
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(home, ec);
  if (!ec) home = absolute.lexically_normal().string();
  if (auto problem = oracle::tvm_home_problem(home)) throw CommandError(kBadInput, *problem);
  out.tvm_home = home;
  // One driver for the command (it starts on the first case): a reduction sends it hundreds
  // of candidates, and TVM's import takes seconds. Campaign workers get their own.
  oracle::TvmDriverOptions driver;
  driver.home = home;
  out.driver = std::make_shared<oracle::TvmDriver>(driver);
  return out;
}

oracle::CaseOptions case_options(const PipelineFlags& f) {
  oracle::CaseOptions o;
  o.aot.merge = f.merge;
  o.aot.mod_name = f.mod_name;
  for (const auto& name : f.inject) {
    auto bug = aot::parse_bug(name);
    if (!bug) throw CommandError(kBadInput, "unknown bug '" + name + "' (see `aotfuzz bugs`)");
    o.aot.bugs.enable(*bug);
  }
  o.aot.api = f.api == "unpacked" ? aot::Options::Api::kUnpacked : aot::Options::Api::kPacked;
  o.aot.interface =
      f.interface == "c" ? aot::Options::Interface::kC : aot::Options::Interface::kPacked;
  if (o.aot.interface == aot::Options::Interface::kC && o.aot.api == aot::Options::Api::kPacked) {
    throw CommandError(kBadInput, "--interface c requires --api unpacked (as in TVM)");
  }
  o.aot.storage_reuse = f.storage_reuse;
  o.aot.check_num_args = f.check_num_args;
  if (!f.cc.empty()) o.compiler = oracle::parse_compiler_kind(f.cc);
  o.sanitize = f.sanitize;
  if (o.sanitize && o.compiler == oracle::CompilerKind::kTcc) {
    throw CommandError(kBadInput, "--sanitize needs --cc gcc or --cc clang");
  }
  o.input_seed = f.input_seed;
  o.max_ulp = f.ulp;
  o.in_process_only = f.no_run;
  if (f.sut == "tvm" && o.aot.bugs.any()) {
    throw CommandError(kBadInput,
                       "--inject changes the builtin pipeline only; it has no meaning with --sut tvm");
  }
  if (f.sut == "tvm" && o.compiler == oracle::CompilerKind::kTcc) {
    throw CommandError(kBadInput, "--sut tvm builds TVM's C with gcc or clang, not tcc");
  }
  o.sut = make_sut(f.sut, f.tvm_home);
  return o;
}

void add_policy_flags(CLI::App* app, std::vector<std::string>& knobs, int& size) {
  app->add_option("--knob", knobs, "Policy knob NAME=VALUE (see `aotfuzz gen --list-knobs`)");
  app->add_option("--size", size, "Builder steps per graph (0: the policy's range)");
}

generator::GenPolicy policy_from_flags(const std::vector<std::string>& knobs, int size,
                                       const std::string& command) {
  generator::GenPolicy policy;
  try {
    for (const auto& kv : knobs) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos) throw ir::Error("--knob expects NAME=VALUE, got '" + kv + "'");
      generator::set_knob(policy, kv.substr(0, eq), kv.substr(eq + 1));
    }
    if (size > 0) policy = generator::with_size(policy, size);
    generator::validate(policy);
  } catch (const ir::Error& e) {
    throw CommandError(kBadInput, command + ": " + e.what());
  }
  return policy;
}

std::string knob_flags(const generator::GenPolicy& policy) {
  const generator::GenPolicy defaults;
  std::string out;
  for (const auto& name : generator::knob_names()) {
    std::string value = generator::get_knob(policy, name);
    if (value != generator::get_knob(defaults, name)) out += " --knob " + name + "=" + value;
  }
  return out;
}

}  // namespace aotfuzz::cli
