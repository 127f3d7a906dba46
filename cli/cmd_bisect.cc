// `aotfuzz bisect BUNDLE|FILE --tvm-git DIR --present REV --absent REV`: the TVM commit that
// introduced a finding (present is the newer end) or fixed it (present is the older end). Each
// step materialises a commit with its submodules (tvm/history.h), builds it with the build
// script, and replays the finding on it as triage does (bundles/triage.h); the search, the record
// bisect.json and the answer are bundles/bisect.h.
// Requires: git and tar; the finding's file has a `// replay: --sut tvm ... => SIGNATURE` line.
// Ensures: every flag is checked before the first build (exit 2, one line); each step is in
// bisect.json as soon as it ends, so a killed run loses at most the step in flight; an end the
// answer rests on is built and judged too; exit 0 with one commit, 1 when skips, --paths or an
// end that is not in the state given leave it open, 3 when git, tar or a mirror fail.
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include "cli/common.h"
#include "bundles/bisect.h"
#include "bundles/bundle.h"
#include "bundles/triage.h"
#include "host/interrupt.h"
#include "host/tempdir.h"
#include "systems/systems.h"
#include "tvm/history.h"

namespace aotfuzz::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Opts {
  std::string target;
  std::string tvm_git;
  std::string present, absent;
  std::vector<std::string> paths;
  std::vector<std::string> patches;
  bool release_patches = false;
  int jobs = 0;
  std::string build_script;
  std::string submodules;
  std::vector<std::string> submodule;
};

// What is bisected, and where its outcomes are kept.
struct Target {
  bundles::TriageCase finding;
  std::string text;                // the graph's file, for the record's setup
  fs::path record;                 // bisect.json
  std::optional<fs::path> bundle;  // its verdict.json gets the answer
};

// Everything a step needs.
struct Bisection {
  Target target;
  tvm::GitRepo tvm;
  bundles::BisectRange range;
  nlohmann::json range_json;
  tvm::BuildRequest build;
  tvm::SubmoduleMirrors mirrors;
  nlohmann::json setup;
  std::set<std::string> noted;  // submodule notes, printed once a run rather than once a step
};

[[noreturn]] void bad_input(const std::string& message) {
  throw CommandError(kBadInput, "bisect: " + message);
}

std::string default_build_script() {
  if (const char* env = std::getenv("AOTFUZZ_TVM_BUILD_SCRIPT"); env != nullptr && *env != '\0') {
    return env;
  }
  return AOTFUZZ_TVM_BUILD_SCRIPT_PATH;
}

// A bundle directory (its reduced graph, its signature) or a .relay file with a finding line.
Target load_target(const std::string& arg) {
  Target t;
  std::error_code ec;
  fs::path relay = fs::absolute(arg, ec);
  std::string signature;
  if (fs::is_directory(relay, ec)) {
    try {
      signature = nlohmann::json::parse(bundles::read_text_file(relay / "verdict.json"))
                      .at("signature")
                      .get<std::string>();
    } catch (const std::exception&) {
      bad_input(arg + ": not a bundle (no verdict.json with a signature)");
    }
    t.bundle = relay;
    t.record = relay / "bisect.json";
    relay /= "reduced.relay";
  } else {
    t.record = relay.parent_path() / "bisect.json";
  }
  try {
    t.finding = bundles::load_triage_case(relay, signature);
    t.text = bundles::read_text_file(relay);
  } catch (const std::exception& e) {
    bad_input(e.what());
  }
  return t;
}

tvm::GitRepo open_repo(const std::string& dir) {
  try {
    return tvm::GitRepo(dir);
  } catch (const tvm::HistoryInputError& e) {
    bad_input("--tvm-git " + std::string(e.what()));
  }
}

// The two ends in order, and the candidates between them.
bundles::BisectRange resolve_range(const tvm::GitRepo& tvm, const Opts& o) {
  bundles::BisectRange r;
  std::string present, absent;
  try {
    present = tvm.resolve(o.present);
    absent = tvm.resolve(o.absent);
  } catch (const tvm::HistoryInputError& e) {
    bad_input(e.what());
  }
  if (present == absent) bad_input("--present and --absent name the same commit " + present);
  if (tvm.is_ancestor(present, absent)) {
    r.kind = bundles::BisectKind::kFixed;
    r.older = present;
    r.newer = absent;
  } else if (tvm.is_ancestor(absent, present)) {
    r.kind = bundles::BisectKind::kIntroduced;
    r.older = absent;
    r.newer = present;
  } else {
    bad_input("neither --present " + o.present + " nor --absent " + o.absent +
              " is an ancestor of the other: bisect needs one line of history between them");
  }
  r.candidates = tvm.ancestry_path(r.older, r.newer, o.paths);
  return r;
}

nlohmann::json range_json(const Opts& o, const bundles::BisectRange& r) {
  const bool fixed = r.kind == bundles::BisectKind::kFixed;
  return {{"tvm_git", o.tvm_git},
          {"present", o.present},
          {"present_commit", fixed ? r.older : r.newer},
          {"absent", o.absent},
          {"absent_commit", fixed ? r.newer : r.older},
          {"paths", o.paths}};
}

tvm::BuildRequest build_request(const Opts& o, std::vector<std::string>& patch_texts) {
  tvm::BuildRequest b;
  std::error_code ec;
  b.script = fs::absolute(o.build_script.empty() ? default_build_script() : o.build_script, ec);
  if (!fs::is_regular_file(b.script, ec) || ::access(b.script.c_str(), X_OK) != 0) {
    bad_input("--build-script " + b.script.string() + ": not an executable file");
  }
  for (const auto& p : o.patches) {
    b.patches.push_back(fs::absolute(p, ec));
    try {
      patch_texts.push_back(bundles::read_text_file(b.patches.back()));
    } catch (const std::exception&) {
      bad_input("--patch " + p + ": cannot be read");
    }
  }
  b.release_patches = o.release_patches;
  if (o.jobs > 0) b.jobs = o.jobs;
  return b;
}

tvm::SubmoduleMirrors make_mirrors(const Opts& o, const tvm::GitRepo& tvm) {
  std::error_code ec;
  std::vector<fs::path> roots;
  if (!o.submodules.empty()) {
    if (!fs::is_directory(o.submodules, ec))
      bad_input("--submodules " + o.submodules + ": no such directory");
    roots.push_back(fs::absolute(o.submodules, ec));
  } else {
    // Siblings of the TVM repository: /work/.mirror/apache+tvm/repo has its neighbours two
    // levels up, a checkout ~/src/tvm one level up.
    roots = {tvm.dir().parent_path(), tvm.dir().parent_path().parent_path()};
  }
  std::map<std::string, fs::path> explicit_dirs;
  for (const auto& s : o.submodule) {
    try {
      auto [path, dir] = tvm::parse_submodule_mirror(s);
      if (!fs::is_directory(dir, ec)) bad_input("--submodule " + s + ": no such directory");
      explicit_dirs[path] = fs::absolute(dir, ec);
    } catch (const std::invalid_argument& e) {
      bad_input(e.what());
    }
  }
  return tvm::SubmoduleMirrors(roots, explicit_dirs, tvm.git_dir());
}

bundles::StepOutcome outcome_of(bundles::TriageOutcome o) {
  switch (o) {
    case bundles::TriageOutcome::kReproduces:
      return bundles::StepOutcome::kReproduces;
    case bundles::TriageOutcome::kPasses:
      return bundles::StepOutcome::kPasses;
    case bundles::TriageOutcome::kOther:
      return bundles::StepOutcome::kOtherSignature;
    case bundles::TriageOutcome::kCannotRun:
      break;
  }
  return bundles::StepOutcome::kDoesNotImport;
}

// The finding replayed on the step's TVM, by a system (and driver) made for it alone.
void judge(const Bisection& b, const std::string& commit, const fs::path& home,
           bundles::BisectStep& step) {
  const auto system = systems::make_built_system(home.string());
  const bundles::TriageCell cell =
      bundles::triage_cell(b.target.finding, {commit.substr(0, 12), home}, system);
  step.outcome = outcome_of(cell.outcome);
  step.signature = cell.signature;
  if (bundles::is_skip(step.outcome)) step.detail = cell.summary;
}

// One step: the commit as a tree, built, judged. nullopt when stopped by Ctrl-C.
std::optional<bundles::BisectStep> run_step(Bisection& b, const std::string& commit) {
  const auto t0 = Clock::now();
  bundles::BisectStep step;
  step.subject = b.tvm.subject(commit);
  tvm::BuildOutcome built;
  {
    // The tree lives only until the build script has copied it into its cache.
    host::TempDir work("aotfuzz-bisect");
    for (const auto& note :
         tvm::materialise_tvm_tree(b.tvm, commit, b.mirrors, work.path(), work.file("tvm"))) {
      if (b.noted.insert(note).second) std::fprintf(stderr, "bisect: %s\n", note.c_str());
    }
    built = tvm::build_tvm(b.build, work.file("tvm"));
  }
  if (built.cancelled) return std::nullopt;
  if (built.built) {
    judge(b, commit, built.home, step);
  } else {
    step.outcome = bundles::StepOutcome::kCannotBuild;
    step.detail = built.detail;
  }
  step.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return step;
}

void save(const Bisection& b, const bundles::BisectSteps& steps, const nlohmann::json& result) {
  try {
    bundles::save_bisect_record(b.target.record, b.setup, b.range_json, steps, result);
  } catch (const std::exception& e) {
    throw CommandError(kInternal,
                       "bisect: cannot write " + b.target.record.string() + ": " + e.what());
  }
}

void print_step_end(const std::string& commit, const bundles::BisectStep& s) {
  std::string line =
      "bisect: " + commit.substr(0, 12) + " " + std::string(bundles::step_outcome_name(s.outcome));
  if (!s.signature.empty()) line += " (" + s.signature + ")";
  line += " after " + bundles::duration_text(s.seconds);
  if (bundles::is_skip(s.outcome)) {
    line += ", skipped: " + tvm::last_lines(s.detail, 1);
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

int recorded_among_candidates(const bundles::BisectRange& r, const bundles::BisectSteps& steps) {
  int n = 0;
  for (const auto& c : r.candidates) n += steps.count(c) ? 1 : 0;
  return n;
}

// Steps until the search is over; false when stopped by Ctrl-C.
bool search(Bisection& b, bundles::BisectSteps& steps, const std::atomic<bool>& interrupted) {
  for (;;) {
    const bundles::SearchPoint p = bundles::search_point(b.range, steps);
    if (!p.next) return true;
    if (interrupted.load()) return false;
    const std::string& commit = b.range.candidates[*p.next];
    const std::string line = bundles::bisect_progress_line(
        recorded_among_candidates(b.range, steps) + 1, p.left, commit, b.tvm.subject(commit),
        bundles::step_estimate_seconds(steps), p.steps_left);
    std::fprintf(stderr, "%s\n", line.c_str());
    const auto step = run_step(b, commit);
    if (!step) return false;
    steps[commit] = *step;
    save(b, steps, nullptr);
    print_step_end(commit, *step);
  }
}

// "--present" or "--absent": the flag that named an end.
const char* end_flag(const Bisection& b, const std::string& commit) {
  return b.range_json.at("present_commit").get<std::string>() == commit ? "--present" : "--absent";
}

// The ends the answer rests on, built and judged when no step has: --present and --absent are
// the user's word, and a swapped pair would otherwise name the commit next to an end, every
// step agreeing. False when stopped by Ctrl-C.
bool verify_ends(Bisection& b, bundles::BisectSteps& steps, const std::atomic<bool>& interrupted) {
  for (const auto& end : bundles::ends_to_verify(b.range, steps)) {
    if (interrupted.load()) return false;
    std::fprintf(stderr,
                 "bisect: the answer rests on %s %s, which no step has judged: building it\n",
                 end_flag(b, end), end.substr(0, 12).c_str());
    const auto step = run_step(b, end);
    if (!step) return false;
    steps[end] = *step;
    save(b, steps, nullptr);
    print_step_end(end, *step);
  }
  return true;
}

std::string commit_line(const nlohmann::json& named) {
  return named.at("commit").get<std::string>().substr(0, 12) + " " +
         named.at("subject").get<std::string>();
}

void print_answer(const Bisection& b, const nlohmann::json& result) {
  const std::string kind = result.at("kind").get<std::string>();
  if (!result.at("unconfirmed_ends").empty()) {
    for (const auto& e : result.at("unconfirmed_ends")) {
      const std::string commit = e.at("commit").get<std::string>();
      const std::string flag = end_flag(b, commit);
      const std::string outcome = e.at("outcome").get<std::string>();
      if (const auto o = bundles::parse_step_outcome(outcome); o && !bundles::is_skip(*o)) {
        std::printf("no answer: %s %s %s, contrary to %s: the ends are wrong or swapped\n",
                    flag.c_str(), commit_line(e).c_str(),
                    *o == bundles::StepOutcome::kReproduces ? "reproduces the finding"
                                                             : "does not reproduce the finding",
                    flag.c_str());
      } else {
        std::printf("no answer: it rests on %s %s, which could not be judged [%s]\n", flag.c_str(),
                    commit_line(e).c_str(), outcome.c_str());
      }
    }
  } else if (result.at("answered").get<bool>()) {
    std::printf("%s by: %s %s\n", kind.c_str(), result.at("commit").get<std::string>().c_str(),
                result.at("subject").get<std::string>().c_str());
    if (result.at("pr").is_number()) std::printf("pr: #%d\n", result.at("pr").get<int>());
  } else if (result.at("could_be").empty() && b.range.candidates.empty()) {
    std::printf("no answer: no commit between the ends touches the --paths given\n");
  } else if (result.at("could_be").empty()) {
    std::printf(
        "no answer: every candidate comes before the change, which is in a later commit "
        "that touches none of the --paths\n");
  } else {
    std::printf("ambiguous: %s by one of these %zu commits (skipped ones could not be judged):\n",
                kind.c_str(), result.at("could_be").size());
    for (const auto& c : result.at("could_be")) {
      std::printf("  %s  [%s]\n", commit_line(c).c_str(),
                  c.at("outcome").get<std::string>().c_str());
    }
    if (result.at("maybe_outside_paths").get<bool>()) {
      std::printf("or by a later commit that touches none of the --paths\n");
    }
  }
  std::printf("steps: %d built (%zu skipped) of %zu candidates; record: %s\n",
              result.at("steps").get<int>(), result.at("skipped").size(), b.range.candidates.size(),
              b.target.record.string().c_str());
}

// The answer into bisect.json, the bundle's verdict.json and stdout.
int finish(const Bisection& b, const bundles::BisectSteps& steps) {
  const bundles::BisectAnswer answer = bundles::bisect_answer(b.range, steps);
  std::map<std::string, std::string> subjects;
  for (const auto& c : answer.could_be) subjects[c] = b.tvm.subject(c);
  if (answer.commit) subjects[*answer.commit] = b.tvm.subject(*answer.commit);
  for (const auto& c : answer.unconfirmed_ends) subjects[c] = b.tvm.subject(c);
  const nlohmann::json result =
      bundles::bisect_result_json(b.range, steps, answer, b.range_json, subjects);
  save(b, steps, result);
  if (b.target.bundle) {
    try {
      bundles::record_bisect(*b.target.bundle, result);
    } catch (const std::exception& e) {
      throw CommandError(
          kInternal, "bisect: cannot record the answer in the bundle: " + std::string(e.what()));
    }
  }
  print_answer(b, result);
  return answer.commit ? kOk : kFinding;
}

Bisection prepare(const Opts& o) {
  Target target = load_target(o.target);
  tvm::GitRepo tvm = open_repo(o.tvm_git);
  bundles::BisectRange range = resolve_range(tvm, o);
  std::vector<std::string> patch_texts;
  tvm::BuildRequest build = build_request(o, patch_texts);
  tvm::SubmoduleMirrors mirrors = make_mirrors(o, tvm);
  nlohmann::json setup = bundles::bisect_setup(
      target.finding.file.filename().string(), target.text, target.finding.signature,
      target.finding.flags, patch_texts, o.release_patches);
  nlohmann::json ends = range_json(o, range);
  return Bisection{std::move(target), std::move(tvm),     std::move(range), std::move(ends),
                   std::move(build),  std::move(mirrors), std::move(setup), {}};
}

int bisect(const Opts& o) {
  Bisection b = prepare(o);
  bundles::BisectSteps steps;
  try {
    steps = bundles::load_bisect_steps(b.target.record, b.setup);
  } catch (const std::invalid_argument& e) {
    bad_input(e.what());
  }
  std::fprintf(stderr, "bisect: which commit %s %s: %zu candidates between %s and %s\n",
               b.range.kind == bundles::BisectKind::kFixed ? "fixed" : "introduced",
               b.target.finding.signature.c_str(), b.range.candidates.size(),
               b.range.older.substr(0, 12).c_str(), b.range.newer.substr(0, 12).c_str());
  if (const int reused = recorded_among_candidates(b.range, steps); reused > 0) {
    std::fprintf(stderr, "bisect: %d steps recorded in %s are reused\n", reused,
                 b.target.record.string().c_str());
  }
  const std::atomic<bool>& interrupted = host::install_interrupt_handler();
  b.build.cancel = &interrupted;
  if (!search(b, steps, interrupted) || !verify_ends(b, steps, interrupted)) {
    std::fprintf(stderr, "bisect: stopped; %d steps recorded in %s, a rerun resumes from them\n",
                 recorded_among_candidates(b.range, steps), b.target.record.string().c_str());
    return kInterrupted;
  }
  return finish(b, steps);
}

}  // namespace

Command register_bisect(CLI::App& parent) {
  auto opts = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand(
      "bisect",
      "The TVM commit that introduced a finding, or fixed it: its history bisected, "
      "each step built with scripts/tvm/build.sh and the finding replayed on it");
  c.app
      ->add_option("BUNDLE|FILE", opts->target,
                   "A bundle of a --sut tvm finding, or a .relay file with a `// replay: FLAGS "
                   "=> SIGNATURE` line")
      ->required();
  c.app->add_option("--tvm-git", opts->tvm_git, "TVM's git repository (bare or a checkout)")
      ->required();
  c.app->add_option("--present", opts->present, "A revision where the finding reproduces")
      ->required();
  c.app->add_option("--absent", opts->absent, "A revision where it does not")->required();
  c.app->add_option("--paths", opts->paths,
                    "Only commits touching these paths are candidates (git rev-list -- PATHS)");
  c.app->add_option("--patch", opts->patches, "Passed to the build script (repeatable)");
  c.app->add_flag("--release-patches", opts->release_patches,
                  "Passed to the build script: the patches of scripts/tvm/patches that apply");
  c.app->add_option("--jobs", opts->jobs, "Passed to the build script: parallel compiles")
      ->check(jobs_range());
  c.app->add_option("--build-script", opts->build_script,
                    "Builds a tree and prints the TVM home last (default scripts/tvm/build.sh, "
                    "or $AOTFUZZ_TVM_BUILD_SCRIPT)");
  c.app->add_option("--submodules", opts->submodules,
                    "Where submodule mirrors are found by name, DIR/<owner+name>/repo or "
                    "DIR/<name> (default: beside --tvm-git)");
  c.app->add_option("--submodule", opts->submodule,
                    "The mirror of one submodule, PATH=DIR (repeatable; e.g. "
                    "3rdparty/dlpack=/src/dlpack)");
  c.run = [opts] {
    try {
      return bisect(*opts);
    } catch (const tvm::HistoryInputError& e) {
      throw CommandError(kBadInput, std::string("bisect: ") + e.what());
    } catch (const tvm::HistoryError& e) {
      throw CommandError(kInternal, std::string("bisect: ") + e.what());
    }
  };
  return c;
}

}  // namespace aotfuzz::cli
