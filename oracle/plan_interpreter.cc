// The plan interpreter: the executor program run in process, on a byte-level model of the
// emitted C's memory (input, output and workspace buffers, the shared stack_value array, one
// DLTensor array per call), every callee evaluated by the reference interpreter.
#include "oracle/plan_interpreter.h"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <unordered_map>

#include "aot/codegen_error.h"
#include "oracle/case_flow.h"
#include "oracle/workspace.h"
#include "reference/interpreter.h"

namespace aotfuzz::oracle {
namespace {

// The harness's page size (oracle/harness.cc maps every input and output on its own pages).
constexpr std::size_t kPageSize = 4096;
// Bytes of static memory modelled past the end of the workspace: reading or writing there does
// not fault in the compiled program (it is other static data), so it is zeros that writes change.
constexpr std::size_t kWorkspaceTail = 4096;
// The harness's output poison patterns of its first and second run.
constexpr std::uint8_t kPoison1 = 0xA5;
constexpr std::uint8_t kPoison2 = 0x5A;

// One allocation of the modelled program: the workspace, an input mapping or an output mapping.
// Only the bytes the program owns are stored; what lies after them up to `addressable` (the rest
// of an input's pages, static memory after the workspace) reads as zeros until written.
struct Region {
  aot::BufferKind kind = aot::BufferKind::kIntermediate;
  std::vector<std::uint8_t> bytes;
  std::size_t addressable = 0;
  // Per byte of `bytes`, 1 when written during the current run. Bytes, not vector<bool>: going
  // through bits one at a time made these scans the larger part of a read.
  std::vector<std::uint8_t> written;
};

// Where a buffer reference points: a region and an offset into it.
struct Span {
  int region = 0;
  std::size_t offset = 0;
  aot::BufferRef buffer;
};

// The end of one run of the model.
struct Stop {
  Verdict verdict;
};

class Machine {
 public:
  Machine(const ir::Module& fused, const aot::ExecutorProgram& program, reference::PlanCache& plans)
      : fused_(fused), program_(program), plans_(plans) {}

  PlanRun run(const std::vector<reference::Value>& inputs) {
    build_memory(inputs);
    PlanRun out;
    // The harness runs the model twice, with different output poison, and reports outputs that
    // differ between the runs as unwritten. When the first run read no byte it had not written
    // itself (nor an input), the second run would repeat it byte for byte except for the
    // never-written output bytes, so the written flags answer without running it.
    if (auto stop = run_once(kPoison1)) {
      out.verdict = stop->verdict;
      return out;
    }
    std::vector<std::vector<std::uint8_t>> first;
    first.reserve(program_.outputs.size());
    for (std::size_t j = 0; j < program_.outputs.size(); ++j) first.push_back(output(j).bytes);
    std::optional<std::pair<int, std::int64_t>> unwritten;
    if (!uninitialised_read_) {
      for (std::size_t j = 0; j < program_.outputs.size() && !unwritten; ++j) {
        const auto& w = output(j).written;
        auto it = std::find(w.begin(), w.end(), std::uint8_t{0});
        if (it != w.end()) unwritten = {static_cast<int>(j), element_of(j, it - w.begin())};
      }
    } else {
      if (auto stop = run_once(kPoison2)) {
        out.verdict = stop->verdict;
        return out;
      }
      for (std::size_t j = 0; j < program_.outputs.size() && !unwritten; ++j) {
        const auto& now = output(j).bytes;
        auto it = std::mismatch(first[j].begin(), first[j].end(), now.begin()).first;
        if (it != first[j].end())
          unwritten = {static_cast<int>(j), element_of(j, it - first[j].begin())};
      }
    }
    if (unwritten) {
      out.verdict = {Stage::kCodegen, OutputUnwritten{unwritten->first, unwritten->second}};
      return out;
    }
    for (std::size_t j = 0; j < program_.outputs.size(); ++j) {
      out.outputs.push_back(reference::Value::tensor(program_.outputs[j], std::move(first[j])));
    }
    out.verdict = {Stage::kRun, Pass{}};
    return out;
  }

 private:
  // A stack_value entry: NULL, or &call_<call>_dl[slot].
  struct Handle {
    int call = -1;
    int slot = 0;
  };

  std::int64_t element_of(std::size_t output, std::ptrdiff_t byte) const {
    return static_cast<std::int64_t>(byte) /
           static_cast<std::int64_t>(ir::dtype_bytes(program_.outputs[output]->dtype()));
  }

  Region& output(std::size_t j) { return regions_[1 + num_inputs_ + j]; }

  // Region 0 is the workspace, then one per input, then one per output.
  void build_memory(const std::vector<reference::Value>& inputs) {
    const auto& params = fused_.main()->params();
    if (inputs.size() != params.size()) {
      throw ir::Error("plan interpreter: @main takes " + std::to_string(params.size()) +
                      " inputs, got " + std::to_string(inputs.size()));
    }
    Region ws;
    ws.kind = aot::BufferKind::kIntermediate;
    ws.bytes.assign((program_.workspace_bytes + 7) / 8 * 8, 0);
    ws.addressable = ws.bytes.size() + kWorkspaceTail;
    // Usually exact: one region per flattened input of the program (checked below).
    regions_.reserve(1 + program_.inputs.size() + program_.outputs.size());
    regions_.push_back(std::move(ws));
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].empty() || !ir::type_equal(inputs[i].type(), params[i]->type())) {
        throw ir::Error("plan interpreter: input " + std::to_string(i) + " does not have type " +
                        ir::type_to_string(params[i]->type()));
      }
      for (const auto& t : inputs[i].flatten()) {
        // The input's bytes at the start of its read-only pages.
        Region r;
        r.kind = aot::BufferKind::kInput;
        r.bytes = t.bytes();
        const std::size_t pages =
            std::max<std::size_t>(1, (r.bytes.size() + kPageSize - 1) / kPageSize);
        r.addressable = pages * kPageSize;
        regions_.push_back(std::move(r));
        ++num_inputs_;
      }
    }
    if (num_inputs_ != program_.inputs.size()) {
      throw ir::Error("plan interpreter: " + std::to_string(num_inputs_) +
                      " flattened inputs, the program has " +
                      std::to_string(program_.inputs.size()));
    }
    for (const auto& type : program_.outputs) {
      // The output ends right at its guard page: nothing past it is addressable.
      Region r;
      r.kind = aot::BufferKind::kOutput;
      r.bytes.assign(aot::tensor_bytes(type), 0);
      r.addressable = r.bytes.size();
      regions_.push_back(std::move(r));
    }
    for (const auto& c : program_.constants) {
      // Read-only data, like an input.
      Region r;
      r.kind = aot::BufferKind::kConstant;
      r.bytes = reference::constant_value(c->type(), c->values()).bytes();
      r.addressable = r.bytes.size();
      regions_.push_back(std::move(r));
    }
  }

  static bool read_only(const Region& r) {
    return r.kind == aot::BufferKind::kInput || r.kind == aot::BufferKind::kConstant;
  }

  std::optional<Stop> run_once(std::uint8_t poison) {
    for (auto& r : regions_) {
      if (!read_only(r)) r.written.assign(r.bytes.size(), 0);
    }
    for (std::size_t j = 0; j < program_.outputs.size(); ++j) {
      std::fill(output(j).bytes.begin(), output(j).bytes.end(), poison);
    }
    stack_.assign(program_.stack_size, Handle{});
    dl_.assign(program_.calls.size(), nullptr);
    for (std::size_t s = 0; s < program_.calls.size(); ++s) {
      if (auto stop = call(s)) return stop;
    }
    for (const auto& copy : program_.copies) {
      if (auto stop = do_copy(copy)) return stop;
    }
    return std::nullopt;
  }

  static CalleeKind kind_of(const aot::ExecutorCall& c) {
    return c.external ? CalleeKind::kExternal : CalleeKind::kKernel;
  }

  static Stop crash(const aot::ExecutorCall* c, const std::string& what) {
    return Stop{{Stage::kRun, Crash{SIGSEGV, c ? std::optional(kind_of(*c)) : CalleeKind::kExecutor,
                                    c ? c->callee : std::string(), "plan interpreter: " + what}}};
  }

  // Where a buffer reference points; nullopt for one the program does not declare.
  std::optional<Span> span(const aot::BufferRef& ref) const {
    switch (ref.kind) {
      case aot::BufferKind::kInput:
        if (ref.index < 0 || static_cast<std::size_t>(ref.index) >= num_inputs_)
          return std::nullopt;
        return Span{1 + ref.index, 0, ref};
      case aot::BufferKind::kOutput:
        if (ref.index < 0 || static_cast<std::size_t>(ref.index) >= program_.outputs.size()) {
          return std::nullopt;
        }
        return Span{static_cast<int>(1 + num_inputs_) + ref.index, 0, ref};
      case aot::BufferKind::kConstant:
        if (ref.index < 0 || static_cast<std::size_t>(ref.index) >= program_.constants.size()) {
          return std::nullopt;
        }
        return Span{static_cast<int>(1 + num_inputs_ + program_.outputs.size()) + ref.index, 0,
                    ref};
      case aot::BufferKind::kIntermediate:
        break;
    }
    if (ref.index < 0 || static_cast<std::size_t>(ref.index) >= program_.buffers.size()) {
      return std::nullopt;
    }
    const std::size_t offset = program_.buffers[ref.index].offset;
    if (offset >= regions_[0].addressable) return std::nullopt;
    return Span{0, offset, ref};
  }

  std::size_t capacity(const Span& sp) const { return regions_[sp.region].addressable - sp.offset; }

  // `n` bytes at `sp` (within capacity), noting a read of bytes this run has not written.
  std::vector<std::uint8_t> read(const Span& sp, std::size_t n) {
    Region& r = regions_[sp.region];
    const std::size_t stored =
        sp.offset < r.bytes.size() ? std::min(n, r.bytes.size() - sp.offset) : 0;
    if (!read_only(r) && !uninitialised_read_) {
      uninitialised_read_ = stored < n;
      if (stored > 0) {
        uninitialised_read_ =
            uninitialised_read_ || std::memchr(r.written.data() + sp.offset, 0, stored) != nullptr;
      }
    }
    if (stored > 0 && stored == n) {
      const std::uint8_t* from = r.bytes.data() + sp.offset;
      return std::vector<std::uint8_t>(from, from + n);
    }
    std::vector<std::uint8_t> out(n, 0);
    if (stored > 0) std::memcpy(out.data(), r.bytes.data() + sp.offset, stored);
    return out;
  }

  // Writes `bytes` at `sp` (within capacity; never an input), growing the stored part if the
  // write reaches past it.
  void write(const Span& sp, const std::vector<std::uint8_t>& bytes) {
    Region& r = regions_[sp.region];
    if (sp.offset + bytes.size() > r.bytes.size()) {
      r.bytes.resize(sp.offset + bytes.size(), 0);
      r.written.resize(r.bytes.size(), 0);
    }
    std::copy(bytes.begin(), bytes.end(), r.bytes.begin() + static_cast<std::ptrdiff_t>(sp.offset));
    const auto first = r.written.begin() + static_cast<std::ptrdiff_t>(sp.offset);
    std::fill(first, first + static_cast<std::ptrdiff_t>(bytes.size()), std::uint8_t{1});
  }

  // The buffer in argument slot k of call s as the callee sees it.
  std::optional<Stop> slot_buffer(std::size_t s, std::size_t k, aot::BufferRef& out) const {
    const aot::ExecutorCall& c = program_.calls[s];
    if (!c.packed) {
      out = c.slots[k].buffer;
      return std::nullopt;
    }
    if (k >= stack_.size()) {
      return crash(&c, c.callee + " reads stack_value[" + std::to_string(k) +
                           "] past the end of the " + std::to_string(stack_.size()) +
                           "-entry array");
    }
    const Handle h = stack_[k];
    if (h.call < 0) {
      return crash(&c, c.callee + " dereferences the NULL DLTensor handle in stack_value[" +
                           std::to_string(k) + "] (num_args " + std::to_string(c.num_args()) + ")");
    }
    out = (*dl_[h.call])[h.slot].buffer;
    return std::nullopt;
  }

  // Evaluates the callee on its flattened inputs (taken from `args`), replacing `results` with
  // its flattened results.
  void evaluate(const aot::ExecutorCall& c, std::vector<reference::Value>& args,
                std::vector<reference::Value>& results) {
    params_.clear();
    std::size_t next = 0;
    for (const auto& p : c.function->params()) params_.push_back(assemble(p->type(), args, next));
    reference::Value result =
        c.external
            ? reference::evaluate(fused_, c.global_name, params_, plans_)
            // A kernel is evaluated on its own: nothing global is in reach, as in its C code.
            : reference::evaluate_function(no_globals_, c.function, "@kernel", params_, plans_);
    results.clear();
    result.flatten(results);
  }

  // A parameter value of `type` from the flattened tensors args[next...], moved out (types nest
  // at most ir::kMaxTypeDepth deep, so this recursion is bounded).
  static reference::Value assemble(const ir::Type& type, std::vector<reference::Value>& args,
                                   std::size_t& next) {
    if (type->is_tensor()) return std::move(args.at(next++));
    std::vector<reference::Value> fields;
    fields.reserve(type->fields().size());
    for (const auto& f : type->fields()) fields.push_back(assemble(f, args, next));
    return reference::Value::tuple(std::move(fields), type);
  }

  std::optional<Stop> call(std::size_t s) {
    const aot::ExecutorCall& c = program_.calls[s];
    const std::size_t arity = static_cast<std::size_t>(c.callee_arity());
    if (c.packed) {
      dl_[s] = &c.slots;
      for (std::size_t k = 0; k < c.slots.size(); ++k) {
        if (k >= stack_.size()) {
          return crash(&c, "the executor writes stack_value[" + std::to_string(k) +
                               "] past the end of the array");
        }
        stack_[k] = Handle{static_cast<int>(s), static_cast<int>(k)};
      }
    } else if (c.slots.size() != arity) {
      return Stop{{Stage::kCodegen, CompileError{"plan", "direct call of " + c.callee + " with " +
                                                             std::to_string(c.slots.size()) +
                                                             " arguments; its prototype has " +
                                                             std::to_string(arity), ""}}};
    }
    std::vector<Span>& spans = spans_;
    std::vector<std::size_t>& slot_bytes = slot_bytes_;
    spans.resize(arity);
    slot_bytes.resize(arity);
    const std::size_t n_in = c.callee_inputs.size();
    for (std::size_t k = 0; k < arity; ++k) {
      aot::BufferRef ref;
      if (auto stop = slot_buffer(s, k, ref)) return stop;
      auto sp = span(ref);
      if (!sp) return crash(&c, "slot " + std::to_string(k) + " points to an undeclared buffer");
      spans[k] = *sp;
      const bool is_in = k < n_in;
      const auto& type = is_in ? c.callee_inputs[k] : c.callee_outputs[k - n_in];
      const std::size_t bytes = aot::tensor_bytes(type);
      slot_bytes[k] = bytes;
      if (!is_in && regions_[sp->region].kind == aot::BufferKind::kConstant) {
        return crash(&c, c.callee + " writes through slot " + std::to_string(k) + " into " +
                             aot::to_string(ref) + ", which is read-only");
      }
      if (!is_in && regions_[sp->region].kind == aot::BufferKind::kInput) {
        return Stop{{Stage::kRun, InputClobbered{ref.index, 0, "", ""}}};
      }
      if (bytes > capacity(*sp)) {
        return crash(&c, c.callee + (is_in ? " reads " : " writes ") + std::to_string(bytes) +
                             " bytes through slot " + std::to_string(k) + " past the end of " +
                             aot::to_string(ref) + " (" + std::to_string(capacity(*sp)) +
                             " bytes addressable)");
      }
    }
    // The emitted code writes one output after the other, element by element in row-major
    // order, reading the operands of each element right before writing it. When an output shares
    // bytes with an input, that order matters, so it is followed element by element (a callee
    // evaluation per element); otherwise one evaluation gives every output.
    bool aliased = false;
    for (std::size_t o = n_in; o < arity && !aliased; ++o) {
      const std::size_t ob = slot_bytes[o];
      for (std::size_t i = 0; i < n_in && !aliased; ++i) {
        const std::size_t ib = slot_bytes[i];
        aliased = spans[o].region == spans[i].region && spans[o].offset < spans[i].offset + ib &&
                  spans[i].offset < spans[o].offset + ob;
      }
    }
    std::vector<reference::Value>& results = results_;
    auto evaluate_now = [&]() -> std::optional<Stop> {
      std::vector<reference::Value>& args = args_;
      args.clear();
      for (std::size_t i = 0; i < n_in; ++i) {
        args.push_back(reference::Value::tensor(c.callee_inputs[i], read(spans[i], slot_bytes[i])));
      }
      try {
        evaluate(c, args, results);
      } catch (const ir::Error& e) {
        return Stop{{Stage::kCodegen,
                     PipelineError{"plan interpreter: evaluating " + c.callee + ": " + e.what()}}};
      }
      if (results.size() != c.callee_outputs.size()) {
        return Stop{{Stage::kCodegen,
                     PipelineError{"plan interpreter: " + c.callee + " returned " +
                                   std::to_string(results.size()) + " tensors, its signature " +
                                   "has " + std::to_string(c.callee_outputs.size())}}};
      }
      return std::nullopt;
    };
    if (!aliased) {
      if (auto stop = evaluate_now()) return stop;
      for (std::size_t j = 0; j < c.callee_outputs.size(); ++j) {
        write(spans[n_in + j], results[j].bytes());
      }
      return std::nullopt;
    }
    for (std::size_t j = 0; j < c.callee_outputs.size(); ++j) {
      const std::size_t elem = ir::dtype_bytes(c.callee_outputs[j]->dtype());
      const std::size_t count = slot_bytes[n_in + j] / elem;
      for (std::size_t e = 0; e < count; ++e) {
        if (auto stop = evaluate_now()) return stop;
        const auto& bytes = results[j].bytes();
        Span at = spans[n_in + j];
        at.offset += e * elem;
        write(at, std::vector<std::uint8_t>(
                      bytes.begin() + static_cast<std::ptrdiff_t>(e * elem),
                      bytes.begin() + static_cast<std::ptrdiff_t>((e + 1) * elem)));
      }
    }
    return std::nullopt;
  }

  std::optional<Stop> do_copy(const aot::OutputCopy& copy) {
    auto from = span(copy.source.buffer);
    auto to = span({aot::BufferKind::kOutput, copy.output});
    const std::size_t bytes = aot::tensor_bytes(copy.source.type);
    if (!from || !to || bytes > capacity(*from) || bytes > capacity(*to)) {
      return crash(nullptr,
                   "the copy into output " + std::to_string(copy.output) + " is out of bounds");
    }
    write(*to, read(*from, bytes));
    return std::nullopt;
  }

  const ir::Module& fused_;
  const aot::ExecutorProgram& program_;
  std::vector<Region> regions_;
  std::size_t num_inputs_ = 0;
  bool uninitialised_read_ = false;
  std::vector<Handle> stack_;
  // The slots each packed call has put in its DLTensor array (null before the call).
  std::vector<const std::vector<aot::TensorRef>*> dl_;
  reference::PlanCache& plans_;
  const ir::Module no_globals_;
  // Per-call scratch, kept so that calls reuse its memory.
  std::vector<Span> spans_;
  std::vector<std::size_t> slot_bytes_;
  std::vector<reference::Value> args_;
  std::vector<reference::Value> params_;
  std::vector<reference::Value> results_;
};

}  // namespace

std::optional<Verdict> check_program_arity(const aot::ExecutorProgram& program,
                                           const std::vector<aot::CallSiteInfo>& expected) {
  const std::size_t n = std::min(program.calls.size(), expected.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = program.calls[i];
    if (c.num_args() != expected[i].num_args) {
      return Verdict{
          Stage::kCodegen,
          Arity{expected[i].callee, c.external ? CalleeKind::kExternal : CalleeKind::kKernel,
                expected[i].num_args, c.num_args(), ArityEvidence::kStatic}};
    }
  }
  if (program.calls.size() != expected.size()) {
    return Verdict{Stage::kCodegen,
                   PipelineError{"the executor makes " + std::to_string(program.calls.size()) +
                                 " calls, the IR has " + std::to_string(expected.size())}};
  }
  return std::nullopt;
}

PlanRun interpret_program(const ir::Module& fused, const aot::ExecutorProgram& program,
                          const std::vector<reference::Value>& inputs,
                          reference::PlanCache* plans) {
  reference::PlanCache own;
  Machine m(fused, program, plans != nullptr ? *plans : own);
  return m.run(inputs);
}

std::vector<RawResult> PlanExecutor::run(std::span<const PreparedCase> cases) {
  std::vector<RawResult> out(cases.size());
  for (std::size_t k = 0; k < cases.size(); ++k) {
    RawResult& raw = out[k];
    const PlanCase* plan = cases[k].plan.get();
    if (plan == nullptr) {
      raw.settled = {Stage::kRun, ToolchainError{"plan executor: the case has no executor program"}};
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    PlanRun run;
    try {
      run = interpret_program(plan->fused, plan->program, plan->inputs, plan->plans.get());
    } catch (const ir::Error& e) {
      raw.settled = {Stage::kRun, ToolchainError{std::string("plan interpreter: ") + e.what()}};
      continue;
    }
    raw.run_time = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - t0);
    // What the compiled harness would have printed and how it would have exited.
    raw.run.kind = host::ExitKind::kExited;
    raw.run.exit_code = 0;
    ParsedRun report;
    if (const auto* clobber = std::get_if<InputClobbered>(&run.verdict.detail)) {
      raw.run.exit_code = kInputClobberedExit;
      report.clobbered_input = {clobber->input_index, clobber->element_index};
    } else if (const auto* unwritten = std::get_if<OutputUnwritten>(&run.verdict.detail)) {
      report.rcs = {0, 0};
      report.unwritten = {{unwritten->output_index, unwritten->element_index}};
      report.completed = true;
    } else if (run.verdict.kind() == VerdictKind::kPass) {
      report.rcs = {0, 0};
      report.outputs.reserve(run.outputs.size());
      for (const auto& v : run.outputs) report.outputs.push_back(v.bytes());
      report.printed.assign(report.outputs.size(), true);
      report.completed = true;
    } else {
      raw.settled = std::move(run.verdict);
      continue;
    }
    raw.report = std::move(report);
  }
  return out;
}

std::optional<PreparedCase> prepare_plan_case(const ir::Module& annotated,
                                              const CaseOptions& options, CaseResult& r,
                                              bool emit_c, const CaseReference* reference) {
  const auto t0 = std::chrono::steady_clock::now();
  // Every stage and the plan interpreter evaluate many of the same functions: plan them once.
  auto plans = std::make_shared<reference::PlanCache>();
  // 1-2. The reference result of the valid input, then the passes, each interpreted.
  if (!reference_and_stages(annotated, options, reference, r, plans.get())) return std::nullopt;
  const auto t_codegen = std::chrono::steady_clock::now();
  // 3. The executor program and its static arities.
  const aot::Options& cg = options.aot;
  auto plan = std::make_shared<PlanCase>();
  plan->fused = r.stages->output();
  std::vector<aot::CallSiteInfo> expected_arity;
  try {
    if (emit_c) {
      r.files = aot::generate_c(plan->fused, cg).files;
      add_prepare_work({.c_generations = 1});
    }
    plan->program = aot::build_executor_program(plan->fused, cg, &expected_arity);
  } catch (const ir::Error& e) {
    r.verdict = {Stage::kCodegen, PipelineError{e.what()}};
    return std::nullopt;
  }
  if (auto v = check_program_arity(plan->program, expected_arity)) {
    r.verdict = *v;
    return std::nullopt;
  }
  PreparedCase c;
  // As prepare_case: reported only when the run passes everything else.
  if (cg.storage_reuse) c.instead_of_pass = check_workspace_reuse(plan->program);
  plan->inputs = r.inputs;
  plan->plans = std::move(plans);
  const auto now = std::chrono::steady_clock::now();
  r.pipeline_time = std::chrono::duration_cast<std::chrono::microseconds>(now - t0);
  r.codegen_time = std::chrono::duration_cast<std::chrono::microseconds>(now - t_codegen);
  c.mod_name = cg.mod_name;
  c.plan = std::move(plan);
  return c;
}

CaseResult run_case_in_process(const ir::Module& annotated, const CaseOptions& options, bool emit_c,
                               const CaseReference* reference) {
  CaseResult r;
  std::optional<PreparedCase> prepared = prepare_plan_case(annotated, options, r, emit_c, reference);
  if (!prepared) return r;
  PlanExecutor executor;
  const auto raw = executor.run(std::span<const PreparedCase>(&*prepared, 1));
  judge_case(annotated, options, *prepared, raw.front(), r);
  return r;
}

}  // namespace aotfuzz::oracle
