// File loading, error mapping, and the pipeline and policy flags shared by the subcommands.
#include "cli/common.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include "aot/bugs.h"
#include "aot/c_writer.h"
#include "aot/pipeline.h"
#include "generator/policy.h"
#include "host/shell_words.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "ir/verify.h"
#include "systems/systems.h"

namespace aotfuzz::cli {

std::string read_file(const std::string& path) {
  if (path == "-") {
    // Standard input can be read once, and some commands read their file twice (reduce: the
    // text for its headers, then the module).
    static const std::string text = [] {
      std::ostringstream ss;
      ss << std::cin.rdbuf();
      return ss.str();
    }();
    return text;
  }
  // An ifstream opens a directory and reads nothing, which would be judged an empty module.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw CommandError(kBadInput, path + ": is a directory, not a Relay file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CommandError(kBadInput, path + ": cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw CommandError(kBadInput, path + ": read error");
  return ss.str();
}

ir::Module load_module(const std::string& path) {
  std::string text = read_file(path);
  const std::string name = path == "-" ? "<stdin>" : path;
  try {
    ir::Module m = ir::parse_module(text, name);
    ir::verify(m);
    return m;
  } catch (const ir::ParseError& e) {
    throw CommandError(kBadInput, e.what());
  } catch (const ir::Error& e) {
    throw CommandError(kBadInput, name + ": error: " + e.what());
  }
}

namespace {

[[noreturn]] void cannot_write(const std::string& path, const std::string& flag,
                               const std::string& command, const std::string& reason) {
  throw CommandError(kBadInput, command + ": cannot write " + flag + " " + path + ": " + reason);
}

}  // namespace

void check_output_file(const std::string& path, const std::string& flag,
                       const std::string& command) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) cannot_write(path, flag, command, "is a directory");
  const bool existed = fs::exists(fs::symlink_status(path, ec));
  // Opening is the only true test (permissions, read-only mounts, root); appending changes
  // nothing in a file that is there, and one that was not is removed again.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) cannot_write(path, flag, command, std::strerror(errno));
  ::close(fd);
  if (!existed) ::unlink(path.c_str());
}

void check_output_dir(const std::string& path, const std::string& flag,
                      const std::string& command) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::path(path).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();  // "findings/"
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    cannot_write(path, flag, command, "not a directory");
  }
  // The directories that are missing, deepest first: created for the probe, then removed, so
  // that a run which writes nothing leaves nothing behind (the campaign creates them on its
  // first finding).
  std::vector<fs::path> missing;
  for (fs::path p = dir; !p.empty() && !fs::exists(fs::symlink_status(p, ec));
       p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  std::string reason;
  fs::create_directories(dir, ec);
  if (ec) {
    reason = ec.message();
  } else {
    std::string probe = (dir / ".probe-XXXXXX").string();
    const int fd = ::mkstemp(probe.data());
    if (fd < 0) {
      reason = std::strerror(errno);
    } else {
      ::close(fd);
      ::unlink(probe.c_str());
    }
  }
  for (const auto& p : missing) fs::remove(p, ec);
  if (!reason.empty()) cannot_write(path, flag, command, reason);
}

CLI::Validator unsigned_decimal(std::uint64_t min) {
  const std::string expected =
      "expects a whole number from " + std::to_string(min) + " to 18446744073709551615, got '";
  return CLI::Validator(
      [min, expected](std::string& input) -> std::string {
        std::uint64_t value = 0;
        const char* end = input.data() + input.size();
        // from_chars takes decimal digits only (no sign, no base prefix) and reports overflow.
        const auto [ptr, ec] = std::from_chars(input.data(), end, value);
        if (input.empty() || ec != std::errc() || ptr != end || value < min) {
          return expected + input + "'";
        }
        input = std::to_string(value);  // "010" stays 10 when CLI11 reads it in base 0
        return {};
      },
      "", "");
}

CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(input.c_str(), &end);
        // 1e9 s keeps the budget in milliseconds far inside an int64.
        if (input.empty() || *end != '\0' || !std::isfinite(value) || value <= 0 || value > 1e9) {
          return "expects seconds, more than 0 and at most 1e9, got '" + input + "'";
        }
        return {};
      },
      "", "");
}

CLI::Option* add_flag_pair(CLI::App* app, const std::string& name, std::function<void(bool)> set,
                           const std::string& help) {
  // No --x=false: a flag callback runs only for true, so the value would be ignored.
  CLI::Option* on = app->add_flag_callback(
      "--" + name, [set] { set(true); }, help);
  CLI::Option* off = app->add_flag_callback(
      "--no-" + name, [set] { set(false); }, "Opposite of --" + name);
  on->disable_flag_override()->excludes(off);
  off->disable_flag_override();
  return on;
}

void add_flag_pair(CLI::App* app, const std::string& name, bool& value, const std::string& help) {
  add_flag_pair(
      app, name, [&value](bool on) { value = on; }, help);
}

namespace {

// A case flag's value checked by its row, as the replay parser checks it; CLI11 names the flag.
CLI::Validator case_flag_check(const oracle::CaseFlagRow& row) {
  return CLI::Validator(
      [&row](std::string& input) -> std::string {
        oracle::CaseOptions scratch;
        oracle::SutSpec spec;
        oracle::CaseFlagTarget target{scratch, spec};
        try {
          row.apply(target, input);
        } catch (const oracle::FlagError& e) {
          return e.what();
        }
        return {};
      },
      "", "");
}

std::string case_flag_help(const oracle::CaseFlagRow& row, bool drawn_per_case,
                           bool over_replay_lines) {
  std::string help(row.help);
  if (over_replay_lines && row.replay == oracle::CaseFlagReplay::kSetting) {
    help += " (default: each replay line's own)";
  } else if (drawn_per_case && row.draw.drawn()) {
    help += " (default: drawn per case, --knob " + std::string(row.draw.knob) +
            "; given, fixed for every case)";
  } else if (!row.default_text.empty()) {
    help += " (default: " + std::string(row.default_text) + ")";
  }
  return help;
}

}  // namespace

void add_pipeline_flags(CLI::App* app, PipelineFlags& f, unsigned command) {
  auto& words = f.words;
  for (const auto& row : oracle::case_flag_table()) {
    if ((row.commands & command) == 0) continue;
    const std::string flag = "--" + std::string(row.name);
    // A campaign and bench draw per case; the other commands run one case as given.
    // Replay and check run files whose replay lines name their own system.
    const std::string help =
        case_flag_help(row, command == oracle::kFuzz || command == oracle::kBench,
                       command == oracle::kReplay || command == oracle::kCheck);
    CLI::Option* option = nullptr;
    switch (row.kind) {
      case oracle::CaseFlagKind::kPair: {
        const std::string name(row.name);
        option = add_flag_pair(
            app, name, [&words, name](bool on) { words.push_back((on ? "--" : "--no-") + name); },
            help);
        break;
      }
      case oracle::CaseFlagKind::kSwitch:
        option = app->add_flag_callback(
            flag, [&words, flag] { words.push_back(flag); }, help);
        option->disable_flag_override();
        break;
      case oracle::CaseFlagKind::kValue:
        option = app->add_option_function<std::string>(
                        flag,
                        [&words, flag](const std::string& value) {
                          words.insert(words.end(), {flag, value});
                        },
                        help)
                     ->check(case_flag_check(row))
                     ->type_name(std::string(row.value_name));
        break;
      case oracle::CaseFlagKind::kList:
        option = app->add_option_function<std::vector<std::string>>(
                        flag,
                        [&words, flag](const std::vector<std::string>& values) {
                          for (const auto& value : values) words.insert(words.end(), {flag, value});
                        },
                        help)
                     ->check(case_flag_check(row))
                     ->type_name(std::string(row.value_name));
        break;
    }
    if (row.commands & oracle::kHidden) option->group("");
  }
}

std::shared_ptr<const oracle::SystemUnderTest> make_sut(const oracle::SutSpec& spec) {
  std::shared_ptr<const oracle::SystemUnderTest> system;
  try {
    system = systems::make_system(spec);
  } catch (const std::invalid_argument& e) {
    throw CommandError(kBadInput, e.what());
  }
  if (auto problem = system->problem()) throw CommandError(kBadInput, *problem);
  return system;
}

oracle::CaseOptions case_options(const std::vector<std::string>& words, bool system_refusals) {
  oracle::CaseOptions o;
  try {
    o = oracle::case_options_from_words(words, make_sut, /*command_line=*/true, system_refusals);
  } catch (const oracle::FlagError& e) {
    throw CommandError(kBadInput, e.what());
  }
  if (o.sanitize && !o.compiler) {
    throw CommandError(kInternal, "--sanitize needs gcc or clang, and neither is installed");
  }
  return o;
}

std::shared_ptr<const oracle::SystemUnderTest> chosen_system(const PipelineFlags& flags) {
  const oracle::CaseOptions o = case_options(flags.words);
  if (o.sut) return o.sut;
  const bool named =
      std::find(flags.words.begin(), flags.words.end(), "--sut") != flags.words.end();
  return named ? oracle::builtin_system() : nullptr;
}

std::string setting_flags(const PipelineFlags& flags) {
  std::string out;
  for (std::size_t i = 0; i < flags.words.size(); ++i) {
    const auto* row = oracle::find_case_flag(flags.words[i]);
    const bool takes_value = row != nullptr && (row->kind == oracle::CaseFlagKind::kValue ||
                                                row->kind == oracle::CaseFlagKind::kList);
    const bool setting = row != nullptr && row->replay != oracle::CaseFlagReplay::kCase;
    if (setting) out += " " + host::shell_quote(flags.words[i]);
    if (takes_value && i + 1 < flags.words.size()) {
      ++i;
      if (setting) out += " " + host::shell_quote(flags.words[i]);
    }
  }
  return out;
}

void add_policy_flags(CLI::App* app, std::vector<std::string>& knobs, int& size) {
  app->add_option("--knob", knobs,
                  "Policy knob NAME=VALUE (see `aotfuzz gen --list-knobs`; a case flag given "
                  "wins over the knob that draws it)");
  app->add_option("--size", size, "Builder steps per graph (0: the policy's range)")
      ->check(CLI::Range(0, std::numeric_limits<int>::max(), "NONNEGATIVE"));
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
    generator::validate(policy);
  } catch (const ir::Error& e) {
    throw CommandError(kBadInput, command + ": " + e.what());
  }
  if (size <= 0) return policy;
  const auto sized = [&](int n) -> std::optional<generator::GenPolicy> {
    try {
      generator::GenPolicy p = generator::with_size(policy, n);
      generator::validate(p);
      return p;
    } catch (const ir::Error&) {
      return std::nullopt;
    }
  };
  if (auto p = sized(size)) return *p;
  // The flag was given, so the message names it and its largest value, not a knob it sets.
  int lo = 0, hi = size;  // sized(lo) holds (0: none), sized(hi) does not
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (sized(mid) ? lo : hi) = mid;
  }
  throw CommandError(kBadInput, command + ": --size " + std::to_string(size) + " is too large" +
                                    (lo > 0 ? ": at most " + std::to_string(lo) +
                                                  (knobs.empty() ? "" : " with these knobs")
                                            : " for these knobs"));
}

std::vector<bundles::TriageBuild> triage_builds(const std::vector<std::string>& labelled,
                                                const std::string& file,
                                                const std::string& command) {
  std::vector<bundles::TriageBuild> builds;
  try {
    if (!file.empty()) builds = bundles::parse_triage_builds_file(read_file(file), file);
    for (const auto& b : labelled) builds.push_back(bundles::parse_triage_build(b));
  } catch (const std::invalid_argument& e) {
    throw CommandError(kBadInput, command + ": " + e.what());
  }
  std::set<std::string> labels;
  for (auto& b : builds) {
    if (!labels.insert(b.label).second) {
      throw CommandError(kBadInput, command + ": TVM build label '" + b.label + "' given twice");
    }
    b.home = std::filesystem::absolute(b.home);
    if (!std::filesystem::is_directory(b.home)) {
      throw CommandError(
          kBadInput, command + ": TVM build '" + b.label + "': no directory " + b.home.string());
    }
    // The check --tvm-home gets: a directory that is no TVM build is bad input, not a column of
    // cannot-run cells.
    if (auto problem = systems::make_built_system(b.home.string())->problem()) {
      throw CommandError(kBadInput, command + ": TVM build '" + b.label + "': " + *problem);
    }
  }
  return builds;
}

namespace {

// Sets each knob of `limits` that `knobs` (the --knob flags given) does not, then validates.
void set_unless_given(generator::GenPolicy& policy, const std::vector<std::string>& knobs,
                      const std::vector<std::pair<std::string, std::string>>& limits,
                      const oracle::SystemUnderTest& system, const std::string& command) {
  for (const auto& [name, value] : limits) {
    const bool given_knob = std::any_of(knobs.begin(), knobs.end(), [&](const std::string& k) {
      return k.rfind(name + "=", 0) == 0;
    });
    if (!given_knob) generator::set_knob(policy, name, value);
  }
  if (limits.empty()) return;
  try {
    generator::validate(policy);
  } catch (const std::exception& e) {
    std::string set;
    for (const auto& [name, value] : limits) set += (set.empty() ? "" : ", ") + name + "=" + value;
    throw CommandError(kBadInput, command + ": with --sut " + system.spec().name + "'s knobs (" +
                                      set + "): " + e.what());
  }
}

}  // namespace

void within_system_limits(generator::GenPolicy& policy, const std::vector<std::string>& knobs,
                          const oracle::SystemUnderTest& system, const std::string& command) {
  set_unless_given(policy, knobs, system.generation_knobs(), system, command);
}

std::vector<fuzz::CampaignOptions::Profile> system_profiles(
    const generator::GenPolicy& policy, const std::vector<std::string>& knobs,
    const oracle::SystemUnderTest& system, const std::string& command) {
  std::vector<fuzz::CampaignOptions::Profile> out;
  for (const auto& p : system.generation_profiles()) {
    fuzz::CampaignOptions::Profile profile{p.name, p.weight, policy, ""};
    set_unless_given(profile.policy, knobs, p.knobs, system, command);
    profile.knob_flags = knob_flags(profile.policy);
    out.push_back(std::move(profile));
  }
  return out;
}

std::string knob_flags(const generator::GenPolicy& policy) {
  const generator::GenPolicy defaults;
  std::string out;
  for (const auto& name : generator::knob_names()) {
    // The knobs of the options drawn per case do not change a graph (the replay line carries a
    // case's options).
    if (generator::knob_use(name) != generator::KnobUse::kGraph) continue;
    std::string value = generator::get_knob(policy, name);
    if (value != generator::get_knob(defaults, name)) out += " --knob " + name + "=" + value;
  }
  return out;
}

bool given(CLI::App* app, const std::string& name) {
  for (const std::string& n : {name, "--no-" + name.substr(2)}) {
    auto* opt = app->get_option_no_throw(n);
    if (opt != nullptr && opt->count() > 0) return true;
  }
  return false;
}

bool any_pipeline_flag(CLI::App* app) {
  for (const auto& row : oracle::case_flag_table()) {
    if (row.replay == oracle::CaseFlagReplay::kCase && given(app, "--" + std::string(row.name))) {
      return true;
    }
  }
  return false;
}

void require_findings_dir(const std::string& dir, const std::string& command) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const char* mark : {"fuzzer_stats", "plot_data", "campaigns"}) {
    if (fs::exists(fs::path(dir) / mark, ec)) return;
  }
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (fs::exists(it->path() / "verdict.json", ec)) return;
  }
  throw CommandError(kBadInput, command + ": " + dir +
                                    ": not a findings directory (no bundle, no campaign's status "
                                    "files; `aotfuzz fuzz --findings " +
                                    dir + "` makes one)");
}

}  // namespace aotfuzz::cli
