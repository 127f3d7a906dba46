// Shared pieces of the fuzz targets.
#include "fuzz/targets/target_support.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <span>
#include <string_view>

#include "fuzz/targets/crash_sites.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/traversal.h"
#include "ir/verify.h"
#include "oracle/case_flow.h"
#include "oracle/plan_interpreter.h"

namespace aotfuzz::fuzz::targets {
namespace {

aot::BugSet parse_bug_list(std::string_view list, const char* source) {
  aot::BugSet bugs;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (name.empty()) continue;
    const auto bug = aot::parse_bug(name);
    if (!bug) {
      std::fprintf(stderr, "aotfuzz: unknown bug \"%.*s\" in %s; the catalogue:\n",
                   static_cast<int>(name.size()), name.data(), source);
      for (const auto& row : aot::bug_table()) {
        std::fprintf(stderr, "  %.*s\n", static_cast<int>(row.name.size()), row.name.data());
      }
      std::exit(2);
    }
    bugs.enable(*bug);
  }
  return bugs;
}

bool within_limits(const ir::Type& type) {
  for (const auto& t : ir::flatten_tensors(type)) {
    if (t->num_elements() > kMaxTextTensorElements) return false;
  }
  return true;
}

}  // namespace

const aot::BugSet& injected_bugs() {
  static const aot::BugSet kBugs = [] {
    if (const char* env = std::getenv("AOTFUZZ_INJECT"))
      return parse_bug_list(env, "AOTFUZZ_INJECT");
#ifdef AOTFUZZ_INJECT_DEFAULT
    return parse_bug_list(AOTFUZZ_INJECT_DEFAULT, "AOTFUZZ_INJECT_DEFAULT");
#else
    return aot::BugSet();
#endif
  }();
  return kBugs;
}

std::string injected_bug_names() {
  std::string out;
  for (const auto& row : aot::bug_table()) {
    if (!injected_bugs().on(row.bug)) continue;
    if (!out.empty()) out += ',';
    out += row.name;
  }
  return out.empty() ? "none" : out;
}

const generator::GenPolicy& fuzz_policy() {
  static const generator::GenPolicy kPolicy = [] {
    generator::GenPolicy p;
    p.max_ops = 24;
    p.max_dim = 4;
    return p;
  }();
  return kPolicy;
}

oracle::CaseOptions case_options(std::uint8_t flags) {
  oracle::CaseOptions o;
  o.aot.bugs = injected_bugs();
  if (flags & 1) {
    o.aot.api = aot::Options::Api::kUnpacked;
    if (flags & 2) o.aot.interface = aot::Options::Interface::kC;
  }
  o.aot.storage_reuse = (flags & 4) == 0;
  o.aot.merge = (flags & 8) == 0;
  return o;
}

oracle::CaseResult differential_verdict(const ir::Module& annotated,
                                        const oracle::CaseOptions& options,
                                        oracle::Executor& executor) {
  oracle::CaseResult r;
  if (auto prepared = oracle::prepare_case(annotated, options, r)) {
    const auto raw = executor.run(std::span<const oracle::PreparedCase>(&*prepared, 1));
    oracle::judge_case(annotated, options, *prepared, raw.front(), r);
  }
  return r;
}

std::optional<ir::Module> parse_bounded(const std::uint8_t* data, std::size_t size) {
  try {
    ir::Module m = ir::parse_module(std::string_view(reinterpret_cast<const char*>(data), size),
                                    "input.relay");
    ir::verify(m);
    // Only annotated graphs are judged: a module that already holds other (partitioned)
    // functions carries attributes, such as symbol names, that the pipeline takes as given.
    if (m.size() != 1) return std::nullopt;
    std::size_t nodes = 0;
    for (const auto& [name, fn] : m.functions()) {
      for (const auto& p : fn->params()) {
        if (!within_limits(p->type())) return std::nullopt;
      }
      for (const auto& n : ir::post_order(fn->body(), true)) {
        if (++nodes > kMaxTextNodes) return std::nullopt;
        if (!n->type()->is_func() && !within_limits(n->type())) return std::nullopt;
      }
    }
    return m;
  } catch (const ir::Error&) {
    return std::nullopt;
  }
}

std::uint64_t hash_bytes(const std::uint8_t* data, std::size_t size) {
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 1099511628211ULL;
  }
  return h;
}

std::string finding_context(const ir::Module& annotated, const oracle::CaseOptions& options) {
  return "replay: save the module below as case.relay, then run\n  aotfuzz run case.relay " +
         oracle::replay_flags(options) + "\n--- module ---\n" + ir::print_module(annotated);
}

void check_in_process(const ir::Module& annotated, const oracle::CaseOptions& options) {
  try {
    const oracle::CaseResult r = oracle::run_case_in_process(annotated, options, false);
    if (oracle::is_finding(r.verdict))
      report_finding(r.verdict, finding_context(annotated, options));
  } catch (const std::exception& e) {
    crash_on_unexpected_exception(std::string("the in-process check threw: ") + e.what() + "\n" +
                                  finding_context(annotated, options));
  }
}

}  // namespace aotfuzz::fuzz::targets
