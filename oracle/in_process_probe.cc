// The probe: prepare_case's steps in a child process (aotfuzz-probe), each step announced over its
// stdout, then what they prepared.
#include "oracle/in_process_probe.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <deque>
#include <cstdlib>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "host/child.h"
#include "host/process.h"
#include "host/toolchain.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "oracle/case_flags.h"
#include "oracle/sut.h"
#include "reference/footprint.h"
#include "reference/value.h"

namespace aotfuzz::oracle {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// The in-process steps' time per MiB of tensors, with room for a loaded machine and a sanitized
// build (bench/in_process_scaling.py measures it; docs/fuzzing.md, "A pass that crashes or hangs").
constexpr std::uint64_t kMsPerTensorMiB = 250;
// Past this, the memory budget refuses the graph long before (and the product stays small).
constexpr std::uint64_t kMaxBudgetMiB = std::uint64_t{1} << 20;

std::atomic<std::uint64_t> g_probe_c_generations{0};
std::atomic<std::uint64_t> g_probe_reference_runs{0};

}  // namespace

SpawnedOutcome run_spawned(const std::vector<std::string>& argv, std::string_view input,
                           std::chrono::milliseconds budget) {
  SpawnedOutcome out;
  host::Child child;
  if (!child.start(host::ChildSpec{.argv = argv})) {
    out.kind = SpawnedOutcome::Kind::kNoSpawn;
    return out;
  }
  const auto deadline = Clock::now() + budget;
  // A child gone before it read everything shows as the end of its output.
  bool timed_out = child.write(input, deadline) == host::ChildIo::kTimedOut;
  child.close_input();
  std::string bytes;
  std::size_t scanned = 0;
  std::size_t answer_at = std::string::npos;
  while (!timed_out) {
    const host::ChildIo io = child.read_some(bytes, deadline, std::size_t{1} << 20);
    if (io == host::ChildIo::kTimedOut) timed_out = true;
    if (io != host::ChildIo::kOk) break;
    for (; answer_at == std::string::npos && scanned < bytes.size(); ++scanned) {
      const auto byte = static_cast<unsigned char>(bytes[scanned]);
      if (byte == kProbeAnswerTag) {
        answer_at = scanned + 1;
      } else if (byte <= static_cast<unsigned char>(Stage::kCodegen)) {
        out.last_mark = static_cast<Stage>(byte);
        out.marked = true;
      }
    }
  }
  host::ChildStatus status;
  if (!timed_out) {
    // Its output ended: it is exiting, or it closed its stdout and goes on (then it hangs).
    const auto left = std::max(std::chrono::milliseconds(0),
                               std::chrono::duration_cast<std::chrono::milliseconds>(
                                   deadline - Clock::now()));
    if (auto ended = child.wait_for(left)) {
      status = *ended;
    } else {
      timed_out = true;
    }
  }
  if (timed_out) {
    child.kill();
    out.kind = SpawnedOutcome::Kind::kTimedOut;
    return out;
  }
  if (status.signal != 0) {
    out.signal = status.signal;
    out.kind = status.signal == SIGKILL ? SpawnedOutcome::Kind::kKilled
                                        : SpawnedOutcome::Kind::kDied;
  } else if (status.exit_code != 0) {
    out.kind = SpawnedOutcome::Kind::kDied;
    out.exit_code = status.exit_code;
  }
  if (answer_at != std::string::npos) {
    out.answered = true;
    out.answer = bytes.substr(answer_at);
  }
  return out;
}

std::string probe_path() {
#ifdef AOTFUZZ_PROBE_BUILD_PATH
  return host::companion_program("AOTFUZZ_PROBE", "aotfuzz-probe", AOTFUZZ_PROBE_BUILD_PATH);
#else
  return host::companion_program("AOTFUZZ_PROBE", "aotfuzz-probe", nullptr);
#endif
}

std::optional<PreparedCase> probe_steps(const ir::Module& annotated, const CaseOptions& options,
                                        const StageMark& mark, CaseResult& r) {
  mark(Stage::kAnnotated);
  const auto t0 = Clock::now();
  const CaseReference ref =
      case_reference(annotated, options.input_seed, nullptr, options.memory_budget);
  const auto reference_time =
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
  if (!ref.invalid) mark(next_stage(Stage::kAnnotated, options.aot));
  // prepare_case settles an invalid reference as it settles it in the caller.
  std::optional<PreparedCase> prepared = prepare_case(annotated, options, r, &ref, &mark);
  // In the caller the reference is part of the pipeline's time.
  if (r.pipeline_time.count() != 0) r.pipeline_time += reference_time;
  return prepared;
}

std::chrono::milliseconds in_process_budget_for(const ir::Module& annotated,
                                                const CaseOptions& options) {
  const std::uint64_t mib = reference::tensor_bytes_needed(annotated) >> 20;
  const auto extra = std::chrono::milliseconds(mib > kMaxBudgetMiB ? kMaxBudgetMiB * kMsPerTensorMiB
                                                                   : mib * kMsPerTensorMiB);
  return options.in_process_budget + extra;
}

namespace {

// The answer is a JSON header that names its large parts (the C, the modules, the tensors' bytes)
// by their index among the blobs that follow it: each is copied once each way, where a JSON or
// CBOR string is escaped or read a byte at a time.
class BlobWriter {
 public:
  json add(std::string_view bytes) {
    blobs_.emplace_back(bytes);
    return blobs_.size() - 1;
  }
  json add(const std::vector<std::uint8_t>& bytes) {
    return add(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  // A temporary (a module's text) is kept here until the answer is written.
  json add(std::string&& owned) { return add(std::string_view(owned_.emplace_back(std::move(owned)))); }
  // u64 header size, header, then per blob u64 size and bytes (little-endian sizes).
  std::string finish(const json& header) const {
    // Text of the pipeline's own messages is ASCII; should a byte that is no UTF-8 slip in, it
    // is replaced rather than the answer lost.
    const std::string head = header.dump(-1, ' ', false, json::error_handler_t::replace);
    std::size_t total = 8 + head.size();
    for (const auto& b : blobs_) total += 8 + b.size();
    std::string out;
    out.reserve(total);
    put(out, head);
    for (const auto& b : blobs_) put(out, b);
    return out;
  }

 private:
  static void put(std::string& out, std::string_view bytes) {
    const std::uint64_t n = bytes.size();
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
    out.append(bytes);
  }
  std::vector<std::string_view> blobs_;
  std::deque<std::string> owned_;
};

class BlobReader {
 public:
  explicit BlobReader(std::string_view bytes) {
    bool first = true;
    while (!bytes.empty()) {
      if (bytes.size() < 8) throw std::runtime_error("an answer cut short");
      std::uint64_t n = 0;
      for (int i = 0; i < 8; ++i) n |= std::uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
      bytes.remove_prefix(8);
      if (n > bytes.size()) throw std::runtime_error("an answer cut short");
      (first ? header_ : blobs_.emplace_back()) = bytes.substr(0, n);
      first = false;
      bytes.remove_prefix(n);
    }
    if (first) throw std::runtime_error("an empty answer");
  }
  std::string_view header() const { return header_; }
  std::string_view at(const json& index) const {
    const auto i = index.get<std::size_t>();
    if (i >= blobs_.size()) throw std::runtime_error("an answer naming a part it lacks");
    return blobs_[i];
  }
  std::string text(const json& index) const { return std::string(at(index)); }

 private:
  std::string_view header_;
  std::vector<std::string_view> blobs_;
};

// A value of the case (an input, an output; a tuple input is a tuple): its tensors' bytes as they
// are, so that the caller compares against exactly the reference's outputs.
json value_json(const reference::Value& v, BlobWriter& blobs) {
  if (v.empty()) return json(nullptr);
  if (v.is_tuple()) {
    json fields = json::array();
    for (const auto& f : v.fields()) fields.push_back(value_json(f, blobs));
    return json{{"tuple", std::move(fields)}};
  }
  return json{{"dtype", ir::dtype_name(v.type()->dtype())},
              {"shape", v.type()->shape()},
              {"bytes", blobs.add(v.bytes())}};
}

reference::Value value_from(const json& j, const BlobReader& blobs) {
  if (j.is_null()) return {};
  if (j.contains("tuple")) {
    std::vector<reference::Value> fields;
    for (const auto& f : j.at("tuple")) fields.push_back(value_from(f, blobs));
    return reference::Value::tuple(std::move(fields));
  }
  const auto dtype = ir::parse_dtype(j.at("dtype").get<std::string>());
  if (!dtype) throw std::runtime_error("a tensor of an unknown dtype");
  const std::string_view bytes = blobs.at(j.at("bytes"));
  return reference::Value::tensor(
      ir::TypeNode::tensor(j.at("shape").get<std::vector<std::int64_t>>(), *dtype),
      std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
}

json values_json(const std::vector<reference::Value>& values, BlobWriter& blobs) {
  json out = json::array();
  for (const auto& v : values) out.push_back(value_json(v, blobs));
  return out;
}

std::vector<reference::Value> values_from(const json& j, const BlobReader& blobs) {
  std::vector<reference::Value> out;
  for (const auto& v : j) out.push_back(value_from(v, blobs));
  return out;
}

// A module that is the one before it: the same functions, not copies (a disabled pass, a pass
// that failed, the stages after it).
bool same_module(const ir::Module& a, const ir::Module& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a.functions()[i].first != b.functions()[i].first ||
        a.functions()[i].second != b.functions()[i].second) {
      return false;
    }
  }
  return true;
}

json stages_json(const aot::Stages& stages, BlobWriter& blobs) {
  json modules = json::array();
  for (int i = 1; i < aot::kNumModuleStages; ++i) {
    const ir::Module& m = stages.at(static_cast<Stage>(i));
    if (same_module(m, stages.at(static_cast<Stage>(i - 1)))) {
      modules.push_back(nullptr);
    } else {
      modules.push_back(blobs.add(ir::print_module(m)));
    }
  }
  return json{{"modules", std::move(modules)},
              {"failed", stages.failed ? json(stage_name(*stages.failed)) : json(nullptr)}};
}

aot::Stages stages_from(const json& j, const ir::Module& annotated, const BlobReader& blobs) {
  aot::Stages stages(annotated);
  const json& modules = j.at("modules");
  if (modules.size() != static_cast<std::size_t>(aot::kNumModuleStages - 1)) {
    throw std::runtime_error("stages of another pipeline");
  }
  for (int i = 1; i < aot::kNumModuleStages; ++i) {
    const json& m = modules[static_cast<std::size_t>(i - 1)];
    // set() gives every later stage the module too, so a stage sent as nothing repeats this one.
    if (!m.is_null()) {
      stages.set(static_cast<Stage>(i),
                 ir::parse_module(blobs.at(m),
                                  std::string(aot::module_stage_names()[static_cast<std::size_t>(i)])));
    }
  }
  if (!j.at("failed").is_null()) {
    stages.failed = aot::parse_stage(j.at("failed").get<std::string>());
    if (!stages.failed) throw std::runtime_error("a stage of another pipeline");
  }
  return stages;
}

json files_json(const std::vector<std::pair<std::string, std::string>>& files, BlobWriter& blobs) {
  json out = json::array();
  for (const auto& [name, text] : files) out.push_back(json::array({name, blobs.add(text)}));
  return out;
}

std::vector<std::pair<std::string, std::string>> files_from(const json& j,
                                                            const BlobReader& blobs) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : j) out.emplace_back(f.at(0).get<std::string>(), blobs.text(f.at(1)));
  return out;
}

json prepared_json(const PreparedCase& c, BlobWriter& blobs) {
  json inputs = json::array();
  for (const auto& in : c.inputs) {
    inputs.push_back(json{{"type", in.type}, {"bytes", blobs.add(in.bytes)}});
  }
  return json{
      {"mod_name", c.mod_name},
      {"sources", files_json(c.sources, blobs)},
      {"header_name", c.header_name},
      {"harness_case", blobs.add(c.harness_case)},
      {"inputs", std::move(inputs)},
      {"expected_args", c.expected_args},
      {"confirm_compiler", c.confirm_compiler
                               ? json(host::compiler_kind_name(*c.confirm_compiler))
                               : json(nullptr)},
      {"syntax_check_first", c.syntax_check_first},
      {"main_c", blobs.add(c.main_c)},
      {"include_dirs", c.include_dirs},
      {"defines", c.defines},
      {"warnings_as_errors", c.warnings_as_errors},
      {"diagnostic_in_signature", c.diagnostic_in_signature},
      {"instead_of_pass", c.instead_of_pass ? to_json(*c.instead_of_pass) : json(nullptr)},
      {"support_sources", files_json(c.support_sources, blobs)},
  };
}

PreparedCase prepared_from(const json& j, const BlobReader& blobs) {
  PreparedCase c;
  c.mod_name = j.at("mod_name").get<std::string>();
  c.sources = files_from(j.at("sources"), blobs);
  c.header_name = j.at("header_name").get<std::string>();
  c.harness_case = blobs.text(j.at("harness_case"));
  for (const auto& in : j.at("inputs")) {
    c.inputs.push_back(HarnessInput{in.at("type").get<std::string>(), blobs.text(in.at("bytes"))});
  }
  c.expected_args = j.at("expected_args").get<std::map<std::string, int>>();
  if (!j.at("confirm_compiler").is_null()) {
    c.confirm_compiler = host::parse_compiler_kind(j.at("confirm_compiler").get<std::string>());
    if (!c.confirm_compiler) throw std::runtime_error("an unknown compiler");
  }
  c.syntax_check_first = j.at("syntax_check_first").get<bool>();
  c.main_c = blobs.text(j.at("main_c"));
  c.include_dirs = j.at("include_dirs").get<std::vector<std::string>>();
  c.defines = j.at("defines").get<std::vector<std::string>>();
  c.warnings_as_errors = j.at("warnings_as_errors").get<bool>();
  c.diagnostic_in_signature = j.at("diagnostic_in_signature").get<bool>();
  if (!j.at("instead_of_pass").is_null()) c.instead_of_pass = from_json(j.at("instead_of_pass"));
  c.support_sources = files_from(j.at("support_sources"), blobs);
  return c;
}

// Bumped with every change of the answer's shape: a probe of another build is refused by name.
constexpr int kAnswerVersion = 1;

}  // namespace

std::string encode_probe_answer(const CaseResult& r, const std::optional<PreparedCase>& prepared,
                                const PrepareWork& work) {
  BlobWriter blobs;
  json steps = json::array();
  for (const auto& [name, us] : r.system_steps) steps.push_back(json::array({name, us.count()}));
  json result{{"verdict", to_json(r.verdict)},
              {"stages", r.stages ? stages_json(*r.stages, blobs) : json(nullptr)},
              {"files", files_json(r.files, blobs)},
              {"inputs", values_json(r.inputs, blobs)},
              {"expected", values_json(r.expected, blobs)},
              {"actual", values_json(r.actual, blobs)},
              {"pipeline_us", r.pipeline_time.count()},
              {"codegen_us", r.codegen_time.count()},
              {"system_steps", std::move(steps)}};
  const json header{
      {"version", kAnswerVersion},
      {"result", std::move(result)},
      {"prepared", prepared ? prepared_json(*prepared, blobs) : json(nullptr)},
      {"work", {{"c_generations", work.c_generations}, {"reference_runs", work.reference_runs}}},
  };
  return blobs.finish(header);
}

ProbeAnswer decode_probe_answer(std::string_view bytes, const ir::Module& annotated) {
  try {
    const BlobReader blobs(bytes);
    const json j = json::parse(blobs.header());
    if (j.at("version").get<int>() != kAnswerVersion) {
      throw std::runtime_error("an answer of version " + j.at("version").dump() + ", not " +
                               std::to_string(kAnswerVersion) + " (a probe of another build)");
    }
    ProbeAnswer a;
    const json& r = j.at("result");
    a.result.verdict = from_json(r.at("verdict"));
    if (!r.at("stages").is_null()) a.result.stages = stages_from(r.at("stages"), annotated, blobs);
    a.result.files = files_from(r.at("files"), blobs);
    a.result.inputs = values_from(r.at("inputs"), blobs);
    a.result.expected = values_from(r.at("expected"), blobs);
    a.result.actual = values_from(r.at("actual"), blobs);
    a.result.pipeline_time = std::chrono::microseconds(r.at("pipeline_us").get<std::int64_t>());
    a.result.codegen_time = std::chrono::microseconds(r.at("codegen_us").get<std::int64_t>());
    for (const auto& step : r.at("system_steps")) {
      a.result.system_steps.emplace_back(step.at(0).get<std::string>(),
                                         std::chrono::microseconds(step.at(1).get<std::int64_t>()));
    }
    if (!j.at("prepared").is_null()) a.prepared = prepared_from(j.at("prepared"), blobs);
    a.work.c_generations = j.at("work").at("c_generations").get<std::uint64_t>();
    a.work.reference_runs = j.at("work").at("reference_runs").get<std::uint64_t>();
    return a;
  } catch (const json::exception& e) {
    throw std::runtime_error(e.what());
  } catch (const ir::Error& e) {
    throw std::runtime_error(e.what());
  }
}

namespace {

// The probe's run of one case: how the child ended, and the verdict that makes of it (nullopt:
// the steps ended, whatever their outcome).
struct ProbeRun {
  SpawnedOutcome outcome;
  std::optional<Verdict> fault;
};

ProbeRun run_probe(const ir::Module& annotated, const CaseOptions& options) {
  ProbeRun run;
  const std::chrono::milliseconds budget = in_process_budget_for(annotated, options);
  const std::string exe = probe_path();
  if (exe.empty()) {
    run.fault = Verdict{Stage::kRun, ToolchainError{"aotfuzz-probe is not next to aotfuzz (the "
                                                    "environment variable AOTFUZZ_PROBE may name "
                                                    "it)"}};
    return run;
  }
  run.outcome =
      run_spawned({exe, "--flags", replay_flags(options), "--parent", std::to_string(::getpid())},
                  ir::print_module(annotated), budget);
  const SpawnedOutcome& o = run.outcome;
  using Kind = SpawnedOutcome::Kind;
  const std::string where = "in the harness's process, at " + std::string(stage_name(o.last_mark));
  switch (o.kind) {
    case Kind::kEnded:
      return run;
    case Kind::kNoSpawn:
      run.fault = Verdict{Stage::kRun, ToolchainError{"cannot start " + exe +
                                                      " to run the case's in-process steps"}};
      return run;
    case Kind::kKilled:
      run.fault = Verdict{Stage::kRun,
                          ToolchainError{"the case's in-process steps were killed (SIGKILL, not by "
                                         "aotfuzz: out of memory?)"}};
      return run;
    case Kind::kTimedOut:
      if (!o.marked) {
        run.fault = Verdict{Stage::kRun, ToolchainError{exe + " did not start within " +
                                                        std::to_string(budget.count()) +
                                                        " ms (the machine, not the pipeline)"}};
        return run;
      }
      if (o.last_mark == Stage::kAnnotated) break;
      run.fault = Verdict{o.last_mark,
                          Timeout{static_cast<std::int64_t>(budget.count()), "hung " + where}};
      return run;
    case Kind::kDied:
      if (o.signal == 0 && o.exit_code == kProbeRefusedExit) {
        run.fault =
            Verdict{Stage::kRun, ToolchainError{exe + " could not read the case back from its "
                                                      "text and flags: a bug of the harness"}};
        return run;
      }
      if (o.last_mark == Stage::kAnnotated) break;
      run.fault = Verdict{
          o.last_mark,
          Crash{
              o.signal, std::nullopt, "",
              o.signal == 0 ? "exit status " + std::to_string(o.exit_code) + " " + where : where}};
      return run;
  }
  run.fault = Verdict{Stage::kRun,
                      ToolchainError{std::string("aotfuzz's reference interpreter ") +
                                     (o.kind == Kind::kTimedOut ? "hung" : "crashed") +
                                     " on this graph: a bug of the harness, not of the pipeline"}};
  return run;
}

}  // namespace

PrepareWork probe_work() {
  return {g_probe_c_generations.load(std::memory_order_relaxed),
          g_probe_reference_runs.load(std::memory_order_relaxed)};
}

std::optional<Verdict> probe_in_process(const ir::Module& annotated, const CaseOptions& options) {
  if (!system_of(options).prepares_in_process()) return std::nullopt;
  return run_probe(annotated, options).fault;
}

std::optional<PreparedCase> prepare_isolated(const ir::Module& annotated,
                                             const CaseOptions& options, CaseResult& r) {
  if (!system_of(options).prepares_in_process()) return prepare_case(annotated, options, r);
  ProbeRun run = run_probe(annotated, options);
  if (run.fault) {
    r.verdict = std::move(*run.fault);
    return std::nullopt;
  }
  // Ended without an answer: out of memory in the child, which this process may yet survive.
  if (!run.outcome.answered) return prepare_case(annotated, options, r);
  ProbeAnswer answer;
  try {
    answer = decode_probe_answer(run.outcome.answer, annotated);
  } catch (const std::exception& e) {
    r.verdict = {Stage::kRun, ToolchainError{std::string("aotfuzz-probe answered what this aotfuzz "
                                                         "cannot read (a bug of the harness): ") +
                                             e.what()}};
    return std::nullopt;
  }
  g_probe_c_generations.fetch_add(answer.work.c_generations, std::memory_order_relaxed);
  g_probe_reference_runs.fetch_add(answer.work.reference_runs, std::memory_order_relaxed);
  r = std::move(answer.result);
  if (!answer.prepared) return std::nullopt;
  return finish_prepared_case(annotated, options, std::move(*answer.prepared), r);
}

}  // namespace aotfuzz::oracle
