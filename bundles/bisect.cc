// The bisection model (bundles/bisect.h): outcomes, the search with skips, bisect.json, answers.
#include "bundles/bisect.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include "bundles/bundle.h"
#include "bundles/status_files.h"

namespace aotfuzz::bundles {
namespace {

constexpr int kRecordVersion = 1;

const BisectStep* step_of(const BisectSteps& steps, const std::string& commit) {
  const auto it = steps.find(commit);
  return it == steps.end() ? nullptr : &it->second;
}

// The first candidate known to be in the newer state: the newer end itself when listed (its
// state is given), or one whose recorded step says so.
int first_newer(const BisectRange& r, const BisectSteps& steps) {
  const int n = static_cast<int>(r.candidates.size());
  for (int i = 0; i < n; ++i) {
    if (r.candidates[i] == r.newer) return i;
    const BisectStep* s = step_of(steps, r.candidates[i]);
    if (s != nullptr && !is_skip(s->outcome) && in_newer_state(r.kind, s->outcome)) return i;
  }
  return n;
}

// The last candidate before `hi` recorded in the older state; -1 for the older end.
int last_older_before(const BisectRange& r, const BisectSteps& steps, int hi) {
  for (int i = hi - 1; i >= 0; --i) {
    const BisectStep* s = step_of(steps, r.candidates[i]);
    if (s != nullptr && !is_skip(s->outcome) && !in_newer_state(r.kind, s->outcome)) return i;
  }
  return -1;
}

std::vector<std::size_t> untested_between(const BisectRange& r, const BisectSteps& steps, int lo,
                                          int hi) {
  std::vector<std::size_t> out;
  for (int i = lo + 1; i < hi; ++i) {
    if (step_of(steps, r.candidates[i]) == nullptr) out.push_back(static_cast<std::size_t>(i));
  }
  return out;
}

// Nearest the middle of (lo, hi), the older on a tie: with skips around the middle, git bisect
// too moves to a neighbour rather than giving up.
std::size_t nearest_to_middle(const std::vector<std::size_t>& open, int lo, int hi) {
  const double middle = (lo + hi) / 2.0;
  std::size_t best = open.front();
  for (std::size_t i : open) {
    if (std::fabs(static_cast<double>(i) - middle) <
        std::fabs(static_cast<double>(best) - middle)) {
      best = i;
    }
  }
  return best;
}

std::string fnv1a_hex(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

nlohmann::json step_json(const BisectStep& s) {
  return {{"outcome", std::string(step_outcome_name(s.outcome))},
          {"signature", s.signature},
          {"subject", s.subject},
          {"seconds", s.seconds},
          {"detail", s.detail}};
}

BisectStep step_from_json(const nlohmann::json& j) {
  BisectStep s;
  const auto outcome = parse_step_outcome(j.at("outcome").get<std::string>());
  if (!outcome) throw std::invalid_argument("unknown outcome " + j.at("outcome").dump());
  s.outcome = *outcome;
  s.signature = j.value("signature", "");
  s.subject = j.value("subject", "");
  s.seconds = j.value("seconds", 0.0);
  s.detail = j.value("detail", "");
  return s;
}

// A commit the answer names, with its subject and what its step said ("untested": never built,
// as the newer end).
nlohmann::json named_commit(const std::string& commit, const BisectSteps& steps,
                            const std::map<std::string, std::string>& subjects) {
  const BisectStep* s = step_of(steps, commit);
  std::string subject = s != nullptr ? s->subject : "";
  if (const auto it = subjects.find(commit); subject.empty() && it != subjects.end()) {
    subject = it->second;
  }
  return {{"commit", commit},
          {"subject", subject},
          {"outcome", s != nullptr ? std::string(step_outcome_name(s->outcome)) : "untested"}};
}

}  // namespace

std::string_view step_outcome_name(StepOutcome outcome) {
  switch (outcome) {
    case StepOutcome::kReproduces:
      return "reproduces";
    case StepOutcome::kPasses:
      return "passes";
    case StepOutcome::kOtherSignature:
      return "other-signature";
    case StepOutcome::kCannotBuild:
      return "cannot-build";
    case StepOutcome::kDoesNotImport:
      break;
  }
  return "does-not-import";
}

std::optional<StepOutcome> parse_step_outcome(std::string_view name) {
  for (StepOutcome o :
       {StepOutcome::kReproduces, StepOutcome::kPasses, StepOutcome::kOtherSignature,
        StepOutcome::kCannotBuild, StepOutcome::kDoesNotImport}) {
    if (step_outcome_name(o) == name) return o;
  }
  return std::nullopt;
}

bool is_skip(StepOutcome outcome) {
  return outcome == StepOutcome::kCannotBuild || outcome == StepOutcome::kDoesNotImport;
}

std::string_view bisect_kind_name(BisectKind kind) {
  return kind == BisectKind::kFixed ? "fixed" : "introduced";
}

bool in_newer_state(BisectKind kind, StepOutcome outcome) {
  const bool reproduces = outcome == StepOutcome::kReproduces;
  return kind == BisectKind::kIntroduced ? reproduces : !reproduces;
}

SearchPoint search_point(const BisectRange& range, const BisectSteps& steps) {
  SearchPoint p;
  p.hi = first_newer(range, steps);
  p.lo = last_older_before(range, steps, p.hi);
  const std::vector<std::size_t> open = untested_between(range, steps, p.lo, p.hi);
  p.untested = open.size();
  const bool newer_known = p.hi < static_cast<int>(range.candidates.size());
  p.left = static_cast<std::size_t>(p.hi - p.lo - 1) + (newer_known ? 1 : 0);
  if (!open.empty()) p.next = nearest_to_middle(open, p.lo, p.hi);
  p.steps_left = static_cast<int>(std::ceil(std::log2(static_cast<double>(open.size()) + 1)));
  return p;
}

namespace {

// The answer of the candidates' steps alone, and the ends it rests on.
BisectAnswer answer_of_candidates(const BisectRange& range, const BisectSteps& steps,
                                  std::vector<std::string>& rests_on) {
  const SearchPoint p = search_point(range, steps);
  BisectAnswer a;
  for (int i = p.lo + 1; i < p.hi; ++i) a.could_be.push_back(range.candidates[i]);
  if (p.hi == static_cast<int>(range.candidates.size())) {
    a.maybe_outside_paths = true;
  } else if (a.could_be.empty()) {
    a.commit = range.candidates[p.hi];
    if (p.lo == -1) rests_on.push_back(range.older);
    if (*a.commit == range.newer) rests_on.push_back(range.newer);
  } else {
    a.could_be.push_back(range.candidates[p.hi]);
  }
  return a;
}

}  // namespace

BisectAnswer bisect_answer(const BisectRange& range, const BisectSteps& steps) {
  std::vector<std::string> rests_on;
  BisectAnswer a = answer_of_candidates(range, steps, rests_on);
  for (const auto& end : rests_on) {
    const BisectStep* s = step_of(steps, end);
    const bool given_newer = end == range.newer;
    if (s != nullptr && !is_skip(s->outcome) &&
        in_newer_state(range.kind, s->outcome) == given_newer) {
      continue;
    }
    a.unconfirmed_ends.push_back(end);
    if (s != nullptr && !is_skip(s->outcome)) a.ends_contradicted = true;
  }
  if (!a.unconfirmed_ends.empty()) a.commit.reset();
  return a;
}

std::vector<std::string> ends_to_verify(const BisectRange& range, const BisectSteps& steps) {
  std::vector<std::string> rests_on;
  answer_of_candidates(range, steps, rests_on);
  std::vector<std::string> out;
  for (const auto& end : rests_on) {
    if (step_of(steps, end) == nullptr) out.push_back(end);
  }
  return out;
}

std::optional<int> pr_number(std::string_view subject) {
  for (std::size_t at = subject.rfind("(#"); at != std::string_view::npos;
       at = at == 0 ? std::string_view::npos : subject.rfind("(#", at - 1)) {
    std::size_t end = at + 2;
    while (end < subject.size() && subject[end] >= '0' && subject[end] <= '9') ++end;
    if (end > at + 2 && end < subject.size() && subject[end] == ')' && end - at - 2 <= 9) {
      return std::stoi(std::string(subject.substr(at + 2, end - at - 2)));
    }
  }
  return std::nullopt;
}

nlohmann::json bisect_setup(const std::string& file, const std::string& graph_text,
                            const std::string& signature, const std::string& flags,
                            const std::vector<std::string>& patch_texts, bool release_patches) {
  nlohmann::json patches = nlohmann::json::array();
  for (const auto& p : patch_texts) patches.push_back(fnv1a_hex(p));
  return {{"file", file},
          {"graph_fnv1a", fnv1a_hex(graph_text)},
          {"signature", signature},
          {"flags", flags},
          {"patches_fnv1a", patches},
          {"release_patches", release_patches}};
}

BisectSteps load_bisect_steps(const std::filesystem::path& record, const nlohmann::json& setup) {
  std::error_code ec;
  if (!std::filesystem::exists(record, ec)) return {};
  BisectSteps steps;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text_file(record));
    for (const auto& [commit, step] : j.at("steps").items()) steps[commit] = step_from_json(step);
  } catch (const std::exception& e) {
    throw std::invalid_argument(record.string() + ": not a bisection record (" + e.what() + ")");
  }
  if (j.value("setup", nlohmann::json()) != setup) {
    // Outcomes hold for one graph, signature, flags and patch set; a different one would be
    // bisected on stale outcomes.
    throw std::invalid_argument(record.string() +
                                ": records a bisection of another graph, signature, flags or "
                                "patches; move it away to start afresh");
  }
  return steps;
}

void save_bisect_record(const std::filesystem::path& record, const nlohmann::json& setup,
                        const nlohmann::json& range, const BisectSteps& steps,
                        const nlohmann::json& result) {
  nlohmann::json by_commit = nlohmann::json::object();
  for (const auto& [commit, step] : steps) by_commit[commit] = step_json(step);
  const nlohmann::json j = {{"version", kRecordVersion},
                            {"setup", setup},
                            {"range", range},
                            {"steps", by_commit},
                            {"result", result}};
  write_file_atomically(record, j.dump(2) + "\n");
}

nlohmann::json bisect_result_json(const BisectRange& range, const BisectSteps& steps,
                                  const BisectAnswer& answer, const nlohmann::json& ends,
                                  const std::map<std::string, std::string>& subjects) {
  nlohmann::json j = {{"kind", std::string(bisect_kind_name(range.kind))},
                      {"answered", answer.commit.has_value()},
                      {"commit", nullptr},
                      {"subject", nullptr},
                      {"pr", nullptr}};
  j.update(ends);
  if (answer.commit) {
    const nlohmann::json named = named_commit(*answer.commit, steps, subjects);
    j["commit"] = *answer.commit;
    j["subject"] = named.at("subject");
    if (auto pr = pr_number(named.at("subject").get<std::string>())) j["pr"] = *pr;
  }
  nlohmann::json could_be = nlohmann::json::array();
  for (const auto& c : answer.could_be) could_be.push_back(named_commit(c, steps, subjects));
  nlohmann::json skipped = nlohmann::json::array();
  int built = 0;
  for (const auto& c : range.candidates) {
    const BisectStep* s = step_of(steps, c);
    if (s == nullptr) continue;
    ++built;
    if (is_skip(s->outcome)) skipped.push_back(named_commit(c, steps, subjects));
  }
  j["could_be"] = could_be;
  j["maybe_outside_paths"] = answer.maybe_outside_paths;
  nlohmann::json unconfirmed = nlohmann::json::array();
  for (const auto& c : answer.unconfirmed_ends) {
    nlohmann::json named = named_commit(c, steps, subjects);
    named["which"] = c == range.newer ? "newer" : "older";
    unconfirmed.push_back(std::move(named));
  }
  j["unconfirmed_ends"] = unconfirmed;
  j["ends_contradicted"] = answer.ends_contradicted;
  j["candidates"] = range.candidates.size();
  j["steps"] = built;
  j["skipped"] = skipped;
  return j;
}

void record_bisect(const std::filesystem::path& bundle_dir, const nlohmann::json& result) {
  const auto path = bundle_dir / "verdict.json";
  BundleLock lock(bundle_dir);
  nlohmann::json j = nlohmann::json::parse(read_text_file(path));
  j["bisect"] = result;
  write_file_atomically(path, j.dump(2) + "\n");
}

std::string duration_text(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, s % 3600 / 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lds", s);
  }
  return buf;
}

std::optional<double> step_estimate_seconds(const BisectSteps& steps) {
  std::optional<double> longest;
  for (const auto& [commit, s] : steps) {
    if (s.seconds > 0 && (!longest || s.seconds > *longest)) longest = s.seconds;
  }
  return longest;
}

std::string bisect_progress_line(int step, std::size_t candidates_left, const std::string& commit,
                                 const std::string& subject, std::optional<double> step_seconds,
                                 int steps_left) {
  std::string line = "bisect: step " + std::to_string(step) + ", " +
                     std::to_string(candidates_left) + " candidates left, building " +
                     commit.substr(0, 12) + " " + subject + "; ";
  const std::string steps = std::to_string(steps_left) + (steps_left == 1 ? " step" : " steps");
  if (step_seconds) {
    line += "up to about " + duration_text(*step_seconds * steps_left) + " left (" + steps +
            " of up to " + duration_text(*step_seconds) + ", the longest step so far)";
  } else {
    line += "at most " + steps + " left, time unknown until one ends";
  }
  return line;
}

}  // namespace aotfuzz::bundles
