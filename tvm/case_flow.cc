// prepare_tvm_case: TVM compiles, the builtin pipeline supplies expectations, one judge.
#include "tvm/case_flow.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "aot/codegen.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/traversal.h"
#include "ir/verify.h"
#include "oracle/case_flow.h"
#include "oracle/harness.h"
#include "oracle/module_diff.h"
#include "oracle/stages.h"
#include "oracle/static_arity.h"
#include "reference/c_interface.h"
#include "reference/tvm_passes.h"
#include "tvm/c_interface_header.h"
#include "tvm/driver.h"
#include "tvm/harness.h"
#include "tvm/known.h"
#include "tvm/pool_plan.h"

namespace aotfuzz::tvm {

using oracle::Arity;
using oracle::ArityEvidence;
using oracle::callee_kind_of;
using oracle::case_limits;
using oracle::CaseOptions;
using oracle::CaseResult;
using oracle::definition_arity;
using oracle::Fidelity;
using oracle::harness_code_c;
using oracle::harness_inputs;
using oracle::harness_inputs_c;
using oracle::InvalidInput;
using oracle::kExecutorSuffixes;
using oracle::packed_definition_arity;
using oracle::Pass;
using oracle::PreparedCase;
using oracle::print_by_name_and_key;
using oracle::reference_and_stages;
using oracle::Stage;
using oracle::static_arity;
using oracle::summary;
using oracle::SutCrash;
using oracle::SutError;
using oracle::Timeout;
using oracle::ToolchainError;
using oracle::tvm_error_site;
using oracle::unified_diff;
using oracle::Verdict;
using oracle::VerdictKind;

namespace {

using Clock = std::chrono::steady_clock;

std::chrono::microseconds since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
}

// Builds the (possibly nested) tuple of `type` from consecutive parameters.
ir::Expr tuple_of(const ir::Type& type, std::vector<ir::Var>::const_iterator& next) {
  if (type->is_tensor()) return *next++;
  std::vector<ir::Expr> fields;
  for (const auto& f : type->fields()) fields.push_back(tuple_of(f, next));
  return ir::TupleNode::make(std::move(fields));
}

// The builtin pipeline's stage a step of TVM's corresponds to.
Stage stage_of_tvm_step(const std::string& step) {
  if (step == "merge") return Stage::kMerge;
  if (step == "partition") return Stage::kPartition;
  return Stage::kCodegen;
}

std::string api_name(const aot::Options& o) {
  return o.api == aot::Options::Api::kUnpacked ? "unpacked" : "packed";
}

std::string interface_name(const aot::Options& o) {
  return o.interface == aot::Options::Interface::kC ? "c" : "packed";
}

// The request's "memory" (driver.py): the AoT executor's memory configuration.
nlohmann::json memory_request(const oracle::MemoryOptions& m) {
  return {{"usmp", m.usmp},
          {"algorithm", m.usmp_algorithm},
          {"pools", m.pools == oracle::MemoryOptions::Pools::kExternal ? "external" : "internal"},
          {"workspace_io", m.workspace_io},
          {"workspace_alignment", m.workspace_alignment},
          {"constant_alignment", m.constant_alignment},
          {"link_params", m.link_params},
          {"debug_overlap", m.debug_overlap}};
}

std::string first_lines(const std::string& text, std::size_t n) {
  std::size_t end = 0;
  for (std::size_t i = 0; i < n; ++i) {
    end = text.find('\n', end);
    if (end == std::string::npos) return text;
    ++end;
  }
  return text.substr(0, end) + "...";
}

// What each external function of TVM's partitioned module takes: its flattened parameters plus
// its flattened results.
std::map<std::string, int> external_arities(const std::optional<ir::Module>& tvm_partitioned) {
  std::map<std::string, int> out;
  if (!tvm_partitioned) return out;
  for (const auto& [name, fn] : tvm_partitioned->functions()) {
    if (name == "main") continue;
    std::size_t n = ir::flat_count(fn->ret_type());
    for (const auto& p : fn->params()) n += ir::flat_count(p->type());
    out[name] = static_cast<int>(n);
  }
  return out;
}

Verdict known_verdict(const KnownBehaviour& why, Stage stage, const std::string& hidden) {
  const std::string source = std::string(why.source) +
                             (why.kind == KnownKind::kBug ? ", a bug of TVM" : ", a change of TVM");
  return {stage, oracle::Known{std::string(why.id), source, hidden}};
}

}  // namespace

ir::Module flatten_tuple_params(const ir::Module& annotated) {
  const ir::Function& main = annotated.main();
  bool any = false;
  for (const auto& p : main->params()) any = any || !p->type()->is_tensor();
  if (!any) return annotated;
  std::vector<ir::Var> params;
  std::unordered_map<const ir::ExprNode*, ir::Expr> replace;
  for (const auto& p : main->params()) {
    if (p->type()->is_tensor()) {
      params.push_back(p);
      continue;
    }
    const auto tensors = ir::flatten_tensors(p->type());
    std::vector<ir::Var> fields;
    for (std::size_t k = 0; k < tensors.size(); ++k) {
      fields.push_back(ir::VarNode::make(p->name() + "_" + std::to_string(k), tensors[k]));
    }
    auto it = fields.cbegin();
    replace[p.get()] = tuple_of(p->type(), it);
    params.insert(params.end(), fields.begin(), fields.end());
  }
  ir::Module out;
  for (const auto& [name, fn] : annotated.functions()) {
    if (name != "main") {
      out.add(name, fn);
      continue;
    }
    out.add(name, ir::FunctionNode::make(params, ir::substitute(main->body(), replace),
                                         main->attrs(), main->ret_type()));
  }
  return out;
}

ir::Module with_main_params_named(const ir::Module& module, const std::vector<ir::Var>& names) {
  const ir::Function& main = module.main();
  // A @main that lost or gained parameters is TVM's answer as it is: the diff shows it.
  if (main->params().size() != names.size()) return module;
  std::vector<ir::Var> params;
  std::unordered_map<const ir::ExprNode*, ir::Expr> replace;
  for (std::size_t i = 0; i < names.size(); ++i) {
    params.push_back(ir::VarNode::make(names[i]->name(), main->params()[i]->type()));
    replace[main->params()[i].get()] = params.back();
  }
  ir::Module out;
  for (const auto& [name, fn] : module.functions()) {
    out.add(name, name != "main"
                      ? fn
                      : ir::FunctionNode::make(params, ir::substitute(main->body(), replace),
                                               main->attrs(), main->ret_type()));
  }
  return out;
}

bool needs_llvm(const std::string& tvm_message) {
  return tvm_message.find("target.build.llvm is not enabled") != std::string::npos;
}

nlohmann::json tvm_graph_json(const ir::Function& main) {
  nlohmann::json params = nlohmann::json::array();
  nlohmann::json nodes = nlohmann::json::array();
  std::unordered_map<const ir::ExprNode*, int> index;
  for (std::size_t i = 0; i < main->params().size(); ++i) {
    const auto& p = main->params()[i];
    if (!p->type()->is_tensor()) {
      throw ir::Error("TVM's driver takes tensor parameters only, not %" + p->name() + ": " +
                      ir::type_to_string(p->type()));
    }
    params.push_back({{"name", p->name()},
                      {"shape", p->type()->shape()},
                      {"dtype", std::string(ir::dtype_name(p->type()->dtype()))}});
    index[p.get()] = static_cast<int>(nodes.size());
    nodes.push_back({{"kind", "param"}, {"index", i}});
  }
  for (const auto& node : ir::post_order(main->body())) {
    if (index.count(node.get())) continue;
    auto at = [&](const ir::Expr& e) { return index.at(e.get()); };
    nlohmann::json j;
    if (const auto* call = ir::as<ir::CallNode>(node); call != nullptr && call->op()) {
      j = {{"kind", "call"}, {"op", std::string(ir::op_name(*call->op()))}};
      nlohmann::json args = nlohmann::json::array();
      for (const auto& a : call->args()) args.push_back(at(a));
      j["args"] = args;
      if (ir::is_annotation(*call->op())) {
        j["compiler"] = ir::annotation_target(node.get()).value_or("");
      }
    } else if (const auto* tup = ir::as<ir::TupleNode>(node)) {
      nlohmann::json fields = nlohmann::json::array();
      for (const auto& f : tup->fields()) fields.push_back(at(f));
      j = {{"kind", "tuple"}, {"fields", fields}};
    } else if (const auto* tgi = ir::as<ir::TupleGetItemNode>(node)) {
      j = {{"kind", "get"}, {"tuple", at(tgi->tuple())}, {"index", tgi->index()}};
    } else if (const auto* c = ir::as<ir::ConstantNode>(node)) {
      j = {{"kind", "const"},
           {"shape", c->type()->shape()},
           {"dtype", std::string(ir::dtype_name(c->type()->dtype()))},
           {"values", c->values()}};
    } else {
      throw ir::Error(
          "TVM's driver takes annotated graphs of ops, constants, tuples and "
          "TupleGetItems, not " +
          ir::describe(*node));
    }
    index[node.get()] = static_cast<int>(nodes.size());
    nodes.push_back(std::move(j));
  }
  return {{"params", params}, {"nodes", nodes}, {"result", index.at(main->body().get())}};
}

std::optional<TvmCaseStart> begin_tvm_case(const ir::Module& original, const CaseOptions& options,
                                           CaseResult& r) {
  const auto t0 = Clock::now();
  // 1-2. The reference, and the builtin pipeline on the same (tensor-parameter) graph.
  ir::Module annotated;
  try {
    ir::verify(original);
    annotated = flatten_tuple_params(original);
  } catch (const ir::Error& e) {
    r.verdict = {Stage::kAnnotated, InvalidInput{e.what()}};
    return std::nullopt;
  }
  if (annotated.size() != 1) {
    r.verdict = {Stage::kAnnotated,
                 InvalidInput{"the TVM driver builds @main alone; this module has " +
                              std::to_string(annotated.size()) + " global functions"}};
    return std::nullopt;
  }
  CaseOptions builtin = options;
  builtin.sut = nullptr;
  const bool builtin_ok = reference_and_stages(annotated, builtin, nullptr, r);
  if (!builtin_ok && r.verdict.kind() == VerdictKind::kInvalidInput &&
      r.verdict.stage == Stage::kAnnotated) {
    return std::nullopt;
  }
  // A refusal of a builtin pass (merge-unsafe graph); a pipeline error or stage mismatch is a bug
  // of the builtin pipeline, which only weakens the expectations taken from it.
  std::optional<Verdict> builtin_refusal;
  if (!builtin_ok && r.verdict.kind() == VerdictKind::kInvalidInput) builtin_refusal = r.verdict;

  // 3. TVM's request.
  TvmCaseStart start;
  try {
    start.request = {
        {"graph", tvm_graph_json(annotated.main())}, {"merge", options.aot.merge},
        {"mod_name", options.aot.mod_name},          {"api", api_name(options.aot)},
        {"interface", interface_name(options.aot)},  {"build", !options.in_process_only},
        {"max_fuse_depth", options.aot.max_fuse_depth},
        {"memory", memory_request(options.memory)}};
  } catch (const ir::Error& e) {
    r.verdict = {Stage::kAnnotated, InvalidInput{e.what()}};
    return std::nullopt;
  }
  start.annotated = std::move(annotated);
  start.builtin_refusal = std::move(builtin_refusal);
  start.own_time = since(t0);
  return start;
}

std::optional<PreparedCase> finish_tvm_case(const TvmCaseStart& start, const TvmBuild& tvm,
                                            const CaseOptions& options, CaseResult& r,
                                            TvmDriver& driver) {
  const ir::Module& annotated = start.annotated;
  const std::optional<Verdict>& builtin_refusal = start.builtin_refusal;
  r.pipeline_time = start.own_time + tvm.elapsed;
  r.system_steps = {{"tvm partition", tvm.partition_time},
                    {"tvm build", tvm.build_time},
                    {"tvm export", tvm.export_time}};
  if (tvm.status == TvmBuild::Status::kUnavailable) {
    r.verdict = {Stage::kAnnotated, ToolchainError{tvm.message, /*system_unusable=*/true}};
    return std::nullopt;
  }
  if (tvm.status == TvmBuild::Status::kUnsupported) {
    // The request needs what this build of TVM lacks (UMA for aotfuzz_uma regions): the
    // environment's limit, and other graphs still build.
    r.verdict = {Stage::kAnnotated, ToolchainError{tvm.message}};
    return std::nullopt;
  }
  if (tvm.status == TvmBuild::Status::kTvmError && needs_llvm(tvm.message)) {
    // TVM folds constant subexpressions by compiling them for the host with LLVM: a TVM built
    // without it cannot, which says nothing about the flow under test.
    r.verdict = {Stage::kAnnotated,
                 ToolchainError{"this TVM has no LLVM codegen, which it needs for this graph "
                                "(constant folding on the host): " +
                                first_lines(tvm.message, 1)}};
    return std::nullopt;
  }
  if (tvm.status != TvmBuild::Status::kOk) {
    const Stage stage = stage_of_tvm_step(tvm.stage);
    std::optional<std::string> c_interface_refusal;
    if (options.aot.interface == aot::Options::Interface::kC) {
      try {
        reference::c_interface_input_names(annotated.main());
      } catch (const reference::TvmRefuses& e) {
        c_interface_refusal = e.what();
      }
    }
    if (builtin_refusal) {
      r.verdict = {builtin_refusal->stage,
                   InvalidInput{summary(*builtin_refusal) + "; TVM fails on it too at " +
                                tvm.stage + ": " + first_lines(tvm.message, 3)}};
    } else if (tvm.status == TvmBuild::Status::kTvmError && c_interface_refusal) {
      // TVM checks on purpose that its C interface's names stay apart (the builtin pipeline
      // refuses the same inputs): the graph is not one a user can build.
      r.verdict = {stage, InvalidInput{"TVM refuses the input names of its C interface (" +
                                       *c_interface_refusal + "): " + first_lines(tvm.message, 1)}};
    } else if (tvm.status == TvmBuild::Status::kTvmError) {
      r.verdict = {stage, SutError{tvm.message, tvm_error_site(tvm.where, tvm.message)}};
    } else if (tvm.status == TvmBuild::Status::kCrashed) {
      r.verdict = {stage, SutCrash{tvm.message}};
    } else {
      r.verdict = {stage, Timeout{0, "TVM at " + tvm.stage + ": " + tvm.message}};
    }
    return std::nullopt;
  }
  r.verdict = {Stage::kRun, Pass{}};
  // What this release is known to do (tvm/known.def), when the case shows nothing else.
  const std::optional<Release> release = parse_release(driver.tvm_version());
  std::optional<Verdict> known;

  // Stage localisation: TVM's partitioned module against the builtin pipeline's.
  std::optional<Verdict> fidelity;
  std::optional<ir::Module> tvm_partitioned;
  try {
    tvm_partitioned = with_main_params_named(
        ir::parse_module(tvm.partitioned, "tvm-partitioned.relay"), annotated.main()->params());
  } catch (const ir::Error& e) {
    fidelity = Verdict{Stage::kPartition,
                       Fidelity{std::string("TVM's partitioned module does not parse here: ") +
                                e.what() + "\n" + tvm.partitioned}};
  }
  if (builtin_refusal) {
    fidelity = Verdict{builtin_refusal->stage, Fidelity{"the builtin pipeline refuses the graph (" +
                                                        summary(*builtin_refusal) +
                                                        "); TVM compiles it:\n" + tvm.partitioned}};
  } else if (tvm_partitioned && r.stages &&
             (!r.stages->failed || *r.stages->failed > Stage::kPartition)) {
    const std::string ours = print_by_name_and_key(r.stages->at(Stage::kPartition));
    const std::string theirs = print_by_name_and_key(*tvm_partitioned);
    std::string diff = unified_diff(ours, theirs, "builtin/partitioned", "tvm/partitioned");
    if (!diff.empty()) fidelity = Verdict{Stage::kPartition, Fidelity{std::move(diff)}};
  }

  if (options.in_process_only) {
    r.verdict = fidelity.value_or(Verdict{Stage::kPartition, Pass{}});
    return std::nullopt;
  }

  // Static arity of TVM's executor.
  bool run_undefined = false;
  const std::string prefix = aot::symbol_prefix(options.aot);
  const std::string* executor_c = nullptr;
  for (const auto& [name, text] : tvm.files) {
    if (name.size() < 2 || name.compare(name.size() - 2, 2, ".c") != 0) continue;
    for (std::string_view suffix : kExecutorSuffixes) {
      if (text.find("int32_t " + prefix + std::string(suffix) + "(") != std::string::npos) {
        executor_c = &text;
      }
    }
  }
  if (executor_c != nullptr) {
    try {
      // What each callee takes, as TVM itself says it: the arguments its C definition reads
      // (packed) or declares (direct), else its type in TVM's partitioned module.
      const auto typed = external_arities(tvm_partitioned);
      std::vector<ArityObservation> calls;
      for (const auto& site : static_arity(*executor_c, options.aot.mod_name)) {
        std::optional<int> takes;
        for (const auto& [name, text] : tvm.files) {
          takes = site.packed ? packed_definition_arity(text, site.callee)
                              : definition_arity(text, site.callee);
          if (takes) break;
        }
        if (!takes) {
          if (auto it = typed.find(site.callee); it != typed.end()) takes = it->second;
        }
        if (!takes) continue;
        bool callee_packed = false;
        if (!site.packed) {
          for (const auto& [name, text] : tvm.files) {
            callee_packed = callee_packed || packed_definition_arity(text, site.callee).has_value();
          }
        }
        calls.push_back({site, *takes, callee_packed});
      }
      const auto wrong = std::find_if(calls.begin(), calls.end(), [](const ArityObservation& c) {
        return c.takes != c.site.num_args;
      });
      const auto misread = std::find_if(calls.begin(), calls.end(), disagrees);
      if (misread != calls.end()) {
        const ArityObservation& shown = wrong != calls.end() ? *wrong : *misread;
        const Verdict arity{
            Stage::kCodegen,
            Arity{shown.site.callee, callee_kind_of(shown.site.callee, options.aot.mod_name),
                  shown.takes, shown.site.num_args, ArityEvidence::kStatic}};
        const KnownBehaviour* why = release ? explain_arity(calls, *release) : nullptr;
        if (why != nullptr && options.see_past_known) {
          known = known_verdict(
              *why, Stage::kCodegen,
              wrong != calls.end() ? summary(arity)
                                   : shown.site.callee + " called directly with " +
                                         std::to_string(shown.site.num_args) +
                                         " arguments; its definition reads packed arguments");
          // Known; the run may still show something else, unless the behaviour leaves it
          // undefined (what TVM's plan says is judged all the same).
          run_undefined = why->run_undefined;
        } else if (wrong != calls.end()) {
          r.verdict = arity;
          for (const auto& f : tvm.files) r.files.push_back(f);
          return std::nullopt;
        }
        // A direct call of a packed definition with the counts agreeing, not explained (or
        // --no-known): the run shows what it does.
      }
    } catch (const ir::Error&) {
      // TVM's executor text is not the shape the reader knows: no static check, the run decides.
      r.verdict = {Stage::kRun, Pass{}};
    }
  }

  // The memory planner's plan against TVM's own C, header and metadata.json (tvm/pool_plan.h).
  if (options.memory.usmp) {
    if (auto pool = judge_pool_plan(tvm.plan, tvm.files, tvm.metadata, options)) {
      r.verdict = *pool;
      for (const auto& f : tvm.files) r.files.push_back(f);
      return std::nullopt;
    }
  }
  if (run_undefined) {
    r.verdict = *known;
    for (const auto& f : tvm.files) r.files.push_back(f);
    return std::nullopt;
  }

  // 4. TVM's C under the harness.
  PreparedCase c;
  c.mod_name = options.aot.mod_name;
  c.header_name = prefix + ".h";
  // What TVM generated for this case is compiled per case; the C runtime's pieces and the
  // harness's runtime are the same for every case of a build (PreparedCase::support_sources).
  for (const auto& f : tvm.files) {
    const bool runtime = f.first == "crt_backend_api.c" || f.first == "crt_config.h";
    (runtime ? c.support_sources : c.sources).push_back(f);
  }
  c.support_sources.emplace_back(kTvmHarnessSupportName, tvm_harness_support_c());
  // The C interface's entry point takes what its header declares, which depends on the build
  // (external pools, workspace-io): the call is written from the header, never a fixed arity.
  oracle::CallWriter call;
  if (options.aot.interface == aot::Options::Interface::kC) {
    const auto header = std::find_if(tvm.files.begin(), tvm.files.end(),
                                     [&](const auto& f) { return f.first == c.header_name; });
    try {
      if (header == tvm.files.end()) throw HeaderError("TVM's export has no such file");
      call = tvm_c_interface_call(annotated, options.aot, options.memory,
                                  read_interface_header(header->second, prefix));
    } catch (const HeaderError& e) {
      r.verdict = {Stage::kRun, ToolchainError{"harness: TVM's header " + c.header_name +
                                               " cannot be read: " + e.what()}};
      for (const auto& f : tvm.files) r.files.push_back(f);
      return std::nullopt;
    } catch (const ir::Error&) {
      // Names the C interface refuses: the default call shows what TVM's C makes of them.
    }
  }
  try {
    c.inputs = harness_inputs(annotated, r.inputs);
    c.harness_case = harness_code_c(annotated, options.aot, c.inputs, call);
  } catch (const ir::Error& e) {
    r.verdict = {Stage::kRun, ToolchainError{std::string("harness: ") + e.what()}};
    return std::nullopt;
  }
  c.main_c =
      tvm_harness_main_c(options.aot, c.header_name, harness_inputs_c(c.inputs) + c.harness_case);
  const std::string crt = driver.crt_dir();
  if (!crt.empty()) c.include_dirs.push_back(crt + "/include");
  c.defines.clear();
  c.warnings_as_errors = false;
  c.diagnostic_in_signature = true;
  c.instead_of_pass = fidelity ? fidelity : known;
  c.limits = case_limits(annotated, options);
  // TVM's own AoT tests build with gcc.
  c.compiler = options.compiler.value_or(host::CompilerKind::kGcc);
  c.toolchain = options.toolchain;
  if (c.toolchain && c.toolchain->kind != *c.compiler) c.toolchain.reset();
  c.sanitize = options.sanitize;
  c.keep_files = options.keep_files;
  r.files = c.program_files();
  return c;
}

std::optional<PreparedCase> prepare_tvm_case(const ir::Module& annotated,
                                             const CaseOptions& options, CaseResult& r,
                                             TvmDriver& driver) {
  auto start = begin_tvm_case(annotated, options, r);
  if (!start) return std::nullopt;
  const auto t0 = Clock::now();
  TvmBuild tvm = driver.build(start->request);
  // The driver's own wait (its lock, a restart) counts as TVM's time, as it always has.
  tvm.elapsed = since(t0);
  return finish_tvm_case(*start, tvm, options, r, driver);
}

}  // namespace aotfuzz::tvm
