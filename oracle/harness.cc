// The harness C program generator and its report parser. The constant C text is in oracle/c/ (and
// oracle/tvm/platform.c); this file splices it with what each case needs.
#include "oracle/harness.h"

#include <charconv>
#include <cstdio>

#include "aot/c_writer.h"
#include "aot/runtime_header.h"
#include "aot/storage_plan.h"
#include "oracle/c/case_libc_h.h"
#include "oracle/c/harness_case_h.h"
#include "oracle/c/harness_pools_c.h"
#include "oracle/c/harness_prologue_h.h"
#include "oracle/c/harness_runtime_c.h"
#include "oracle/c/harness_workspace_c.h"
#include "reference/c_interface.h"

namespace aotfuzz::oracle {
namespace {

using aot::CWriter;
using aot::Options;

std::string hex_bytes_initializer(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() * 6 + text.size() / 16 * 4 + 8);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i % 16 == 0) out += i == 0 ? "  " : "\n  ";
    out += "0x";
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 15]);
    if (i + 1 < text.size()) out += i % 16 == 15 ? "," : ", ";
  }
  return out;
}

std::string size_list(const std::vector<std::size_t>& values) {
  std::string out;
  for (std::size_t v : values) out += std::to_string(v) + ", ";
  return out + "0";  // the extra element keeps every table non-empty
}

std::string dtype_code(ir::DType dtype) {
  return dtype == ir::DType::kFloat32 ? "kDLFloat" : "kDLInt";
}

}  // namespace

std::string harness_runtime_c() {
  std::string out = std::string(kPrologue) + "\n#include \"" +
                    std::string(aot::kRuntimeHeaderName) +
                    "\"\n\nAOTFUZZ_DEFINE_TRACE_FILE;\nAOTFUZZ_DEFINE_FAULTS;\n";
  for (std::string_view piece : {kCaseStruct, kRuntimePart, kWorkspacePart}) {
    out += "\n";
    out += piece;
  }
  return out;
}

namespace {

constexpr std::string_view kSharedEntry = "aotfuzz_harness_run_case";

// `text` without its `#include <...>` lines.
std::string without_system_includes(std::string_view text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    if (line.rfind("#include <", 0) != 0) {
      out.append(line);
      out.push_back('\n');
    }
    start = end + 1;
  }
  return out;
}

}  // namespace

namespace {

// The entry point of a runtime compiled apart from its cases: its prototype, and its
// definition, which runs a case through the runtime's own aotfuzz_harness_run.
std::string shared_entry_declaration() {
  return "int " + std::string(kSharedEntry) +
         "(const struct aotfuzz_harness_case* c, const uint8_t* const* input_data);\n";
}
std::string shared_entry_definition() {
  std::string head = shared_entry_declaration();
  head.replace(head.size() - 2, 2, " {\n");
  return shared_entry_declaration() + head + "  return aotfuzz_harness_run(c, input_data);\n}\n";
}

}  // namespace

std::string harness_shared_runtime_c() {
  return harness_runtime_c() + "\n" + shared_entry_definition();
}

std::vector<std::string> harness_runtime_symbols() {
  return {"aotfuzz_trace_file",       "aotfuzz_fault_points",    "aotfuzz_fault_countdown",
          "TVMBackendAllocWorkspace", "TVMBackendFreeWorkspace", std::string(kSharedEntry),
          "fprintf",                  "fflush",                  "memset",
          "memcpy"};
}

std::string harness_case_prelude_c() {
  return std::string(kCaseLibc) + without_system_includes(aot::runtime_header_text()) +
         std::string(kCaseStruct) + shared_entry_declaration();
}

std::string_view harness_shared_entry() { return kSharedEntry; }

std::vector<HarnessInput> harness_inputs(const ir::Module& module,
                                         const std::vector<reference::Value>& inputs) {
  const ir::Function& main = module.main();
  if (inputs.size() != main->params().size()) {
    throw HarnessError("@main takes " + std::to_string(main->params().size()) + " parameters but " +
                       std::to_string(inputs.size()) + " inputs were given");
  }
  std::vector<HarnessInput> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty() || !ir::type_equal(inputs[i].type(), main->params()[i]->type())) {
      throw HarnessError(
          "input " + std::to_string(i) + " has type " +
          (inputs[i].empty() ? std::string("(none)") : ir::type_to_string(inputs[i].type())) +
          " but %" + main->params()[i]->name() + " is " +
          ir::type_to_string(main->params()[i]->type()));
    }
    for (const auto& v : inputs[i].flatten()) {
      HarnessInput in;
      in.type = ir::type_to_string(v.type());
      in.bytes.assign(v.bytes().begin(), v.bytes().end());
      out.push_back(std::move(in));
    }
  }
  return out;
}

std::string harness_inputs_c(const std::vector<HarnessInput>& inputs) {
  CWriter w;
  std::string data_table;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& bytes = inputs[i].bytes;
    const std::string name = std::string(kCasePrefix) + "input_" + std::to_string(i) + "_data";
    w.line("/* input " + std::to_string(i) + ": " + aot::comment_text(inputs[i].type) + " */");
    if (bytes.empty()) {
      w.line("static const uint8_t " + name + "[1] = {0};");
    } else {
      w.line("static const uint8_t " + name + "[" + std::to_string(bytes.size()) + "] = {");
      w.raw(hex_bytes_initializer(bytes) + "\n");
      w.line("};");
    }
    data_table += name + ", ";
  }
  w.line("static const uint8_t* const " + std::string(kCasePrefix) + "input_data[" +
         std::to_string(inputs.size() + 1) + "] = {" + data_table + "NULL};");
  return w.take();
}

std::string harness_inputs_stub_c(std::size_t num_inputs) {
  return "static const uint8_t* const " + std::string(kCasePrefix) + "input_data[" +
         std::to_string(num_inputs + 1) + "] = {NULL};\n";
}

std::string harness_case_c(const ir::Module& module, const aot::Options& options,
                           const std::vector<reference::Value>& inputs) {
  const auto flat = harness_inputs(module, inputs);
  return harness_inputs_c(flat) + harness_code_c(module, options, flat);
}

std::string harness_code_c(const ir::Module& module, const aot::Options& options,
                           const std::vector<HarnessInput>& flat_inputs, const CallWriter& call) {
  const ir::Function& main = module.main();
  const auto out_types = ir::flatten_tensors(main->ret_type());
  const std::string prefix = aot::symbol_prefix(options);
  const std::size_t n_in = flat_inputs.size();
  const std::size_t n_out = out_types.size();

  CWriter w;
  w.line("/* The case of module \"" + options.mod_name + "\". */");
  std::vector<ir::Type> in_types;
  for (const auto& param : main->params()) {
    for (auto& t : ir::flatten_tensors(param->type())) in_types.push_back(std::move(t));
  }
  if (in_types.size() != n_in) {
    throw HarnessError("@main has " + std::to_string(in_types.size()) + " input tensors but " +
                       std::to_string(n_in) + " were given");
  }
  std::vector<std::size_t> in_sizes, in_elems, out_sizes, out_elems;
  for (std::size_t i = 0; i < n_in; ++i) {
    if (flat_inputs[i].bytes.size() != aot::tensor_bytes(in_types[i])) {
      throw HarnessError("input tensor " + std::to_string(i) + " has " +
                         std::to_string(flat_inputs[i].bytes.size()) + " bytes, " +
                         ir::type_to_string(in_types[i]) + " needs " +
                         std::to_string(aot::tensor_bytes(in_types[i])));
    }
    in_sizes.push_back(flat_inputs[i].bytes.size());
    in_elems.push_back(ir::dtype_bytes(in_types[i]->dtype()));
  }
  for (const auto& t : out_types) {
    out_sizes.push_back(aot::tensor_bytes(t));
    out_elems.push_back(ir::dtype_bytes(t->dtype()));
  }
  const std::string p(kCasePrefix);
  const std::string n_in1 = std::to_string(n_in + 1), n_out1 = std::to_string(n_out + 1);
  w.line("static const size_t " + p + "input_size[" + n_in1 + "] = {" + size_list(in_sizes) + "};");
  w.line("static const size_t " + p + "input_elem[" + n_in1 + "] = {" + size_list(in_elems) + "};");
  w.line("static const size_t " + p + "output_size[" + n_out1 + "] = {" + size_list(out_sizes) +
         "};");
  w.line("static const size_t " + p + "output_elem[" + n_out1 + "] = {" + size_list(out_elems) +
         "};");
  w.line();

  // The call of the entry point, in the chosen interface.
  const std::string run_once =
      "static int32_t " + p + "run_once(uint8_t* const* input_buf, uint8_t* const* output_buf)";
  if (call) {
    w.open(run_once);
    call(w);
    w.close();
  } else if (options.interface == Options::Interface::kC) {
    const auto in_fields = reference::c_interface_input_names(main);
    const auto out_fields = aot::output_field_names(main);
    w.open(run_once);
    w.line("struct " + prefix + "_inputs inputs;");
    w.line("struct " + prefix + "_outputs outputs;");
    w.line("memset(&inputs, 0, sizeof(inputs));");
    w.line("memset(&outputs, 0, sizeof(outputs));");
    if (n_in == 0) w.line("(void)input_buf;");
    if (n_out == 0) w.line("(void)output_buf;");
    for (std::size_t i = 0; i < n_in; ++i) {
      w.line("inputs." + in_fields[i] + " = input_buf[" + std::to_string(i) + "];");
    }
    for (std::size_t i = 0; i < n_out; ++i) {
      w.line("outputs." + out_fields[i] + " = output_buf[" + std::to_string(i) + "];");
    }
    w.line("return " + prefix + "_run(&inputs, &outputs);");
    w.close();
  } else {
    std::vector<ir::Type> all = in_types;
    all.insert(all.end(), out_types.begin(), out_types.end());
    for (std::size_t k = 0; k < all.size(); ++k) {
      const auto& shape = all[k]->shape();
      if (shape.empty()) continue;
      std::string dims;
      for (auto d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
      w.line("static int64_t " + p + "shape_" + std::to_string(k) + "[" +
             std::to_string(shape.size()) + "] = {" + dims + "};");
    }
    const std::string n = std::to_string(all.size() + 1);
    w.open(run_once);
    w.line("DLTensor tensors[" + n + "];");
    w.line("TVMValue values[" + n + "];");
    w.line("int codes[" + n + "];");
    w.line("TVMValue ret;");
    w.line("int ret_code = 0;");
    w.line("memset(tensors, 0, sizeof(tensors));");
    w.line("memset(values, 0, sizeof(values));");
    w.line("memset(codes, 0, sizeof(codes));");
    w.line("memset(&ret, 0, sizeof(ret));");
    if (n_in == 0) w.line("(void)input_buf;");
    if (n_out == 0) w.line("(void)output_buf;");
    for (std::size_t k = 0; k < all.size(); ++k) {
      const std::string buf = k < n_in ? "input_buf[" + std::to_string(k) + "]"
                                       : "output_buf[" + std::to_string(k - n_in) + "]";
      const std::string t = "tensors[" + std::to_string(k) + "]";
      w.line(t + ".data = " + buf + ";");
      w.line(t + ".device.device_type = kDLCPU;");
      w.line(t + ".ndim = " + std::to_string(all[k]->shape().size()) + ";");
      w.line(t + ".shape = " +
             (all[k]->shape().empty() ? std::string("NULL") : p + "shape_" + std::to_string(k)) +
             ";");
      w.line(t + ".dtype.code = " + dtype_code(all[k]->dtype()) + ";");
      w.line(t + ".dtype.bits = " + std::to_string(ir::dtype_bytes(all[k]->dtype()) * 8) + ";");
      w.line(t + ".dtype.lanes = 1;");
      w.line("values[" + std::to_string(k) + "].v_handle = &" + t + ";");
      w.line("codes[" + std::to_string(k) + "] = kTVMDLTensorHandle;");
    }
    w.line("return " + prefix + "_run(values, codes, " + std::to_string(all.size()) +
           ", &ret, &ret_code, NULL);");
    w.close();
  }
  w.line();
  w.line("static const struct aotfuzz_harness_case " + p + "entry = {");
  w.line("  " + std::to_string(n_in) + ", " + std::to_string(n_out) + ", " + p + "input_data, " +
         p + "input_size, " + p + "input_elem, " + p + "output_size, " + p + "output_elem, " + p +
         "run_once};");
  return w.take();
}

std::string harness_main_c(const std::string& mod_name, const std::string& header_name,
                           const std::string& case_part) {
  std::string out =
      "/* main.c: test harness of module \"" + mod_name + "\" (generated by aotfuzz). */\n";
  out += harness_runtime_c();
  // Twice: the header's include guard must hold, as a user's sources include it from several
  // files (without one, its structs are defined twice and the program does not compile).
  out += "\n#include \"" + header_name + "\"\n#include \"" + header_name + "\"\n\n";
  out += case_part;
  out += "\nint main(void) { return aotfuzz_harness_run(&" + std::string(kCasePrefix) +
         "entry, NULL); }\n";
  return out;
}

std::string foreign_harness_support_c(const std::string& title, const std::string& headers,
                                      const std::string& platform) {
  std::string out = title + std::string(kPrologue) + headers + "\n";
  out += platform;
  for (std::string_view piece : {kCaseStruct, kRuntimePart, kPoolsPart}) {
    out += "\n";
    out += piece;
  }
  return out + "\n" + shared_entry_definition();
}

std::string foreign_harness_case_c(const std::string& title, const std::string& headers,
                                   const std::string& run_declaration,
                                   const std::string& case_part) {
  // Only what the case code uses (types, NULL, memset): the prologue's headers are the runtime's,
  // and parsing them again in every case's file was most of what its compile cost.
  std::string out = title + "#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n" +
                    headers + "\n";
  out += kCaseStruct;
  out += shared_entry_declaration();
  out += "uint8_t* aotfuzz_harness_pool(int k, size_t size, size_t alignment);\n";
  out += run_declaration;
  out += case_part;
  out += "\nint main(void) { return " + std::string(kSharedEntry) + "(&" +
         std::string(kCasePrefix) + "entry, NULL); }\n";
  return out;
}

std::string harness_c(const ir::Module& module, const aot::Options& options,
                      const std::vector<reference::Value>& inputs) {
  return harness_main_c(options.mod_name, aot::header_file_name(options),
                        harness_case_c(module, options, inputs));
}

namespace {

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j;
  }
  return words;
}

template <class T>
bool parse_int(std::string_view s, T& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool parse_hex(std::string_view s, std::vector<std::uint8_t>& out) {
  if (s.size() % 2 != 0) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  out.clear();
  out.reserve(s.size() / 2);
  for (std::size_t i = 0; i < s.size(); i += 2) {
    const int hi = nibble(s[i]), lo = nibble(s[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<std::uint8_t>(hi * 16 + lo));
  }
  return true;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

// Interprets one "AOTFUZZ ..." line; false when it is malformed.
bool parse_report(const std::vector<std::string_view>& w, ParsedRun& run) {
  const std::string_view what = w.size() > 1 ? w[1] : std::string_view();
  if (what == "run" && w.size() == 3) {
    int k = 0;
    if (!parse_int(w[2], k) || k < 1) return false;
    run.traces.resize(static_cast<std::size_t>(k));
    return true;
  }
  if (what == "rc" && w.size() == 3) {
    int rc = 0;
    if (!parse_int(w[2], rc)) return false;
    run.rcs.push_back(rc);
    return true;
  }
  if (what == "output-unwritten" && w.size() == 4) {
    int j = 0;
    std::int64_t e = 0;
    if (!parse_int(w[2], j) || !parse_int(w[3], e) || j < 0) return false;
    run.unwritten.emplace_back(j, e);
    return true;
  }
  if (what == "output" && (w.size() == 4 || w.size() == 3)) {
    int j = 0;
    std::vector<std::uint8_t> bytes;
    if (!parse_int(w[2], j) || j < 0 || j > (1 << 20)) return false;
    if (w.size() == 4 && !parse_hex(w[3], bytes)) return false;
    if (run.outputs.size() <= static_cast<std::size_t>(j)) {
      run.outputs.resize(static_cast<std::size_t>(j) + 1);
      run.printed.resize(static_cast<std::size_t>(j) + 1, false);
    }
    run.outputs[j] = std::move(bytes);
    run.printed[j] = true;
    return true;
  }
  if (what == "input-clobbered" && (w.size() == 3 || w.size() == 4)) {
    int i = 0;
    std::int64_t e = 0;
    if (!parse_int(w[2], i) || (w.size() == 4 && !parse_int(w[3], e))) return false;
    run.clobbered_input = std::make_pair(i, e);
    return true;
  }
  if (what == "fault" && w.size() == 5) {
    FaultRun f;
    if (!parse_int(w[2], f.fail_at) || !parse_int(w[3], f.rc) || !parse_int(w[4], f.calls_after)) {
      return false;
    }
    run.faults.push_back(f);
    return true;
  }
  if (what == "arg-error" && w.size() == 4 && is_identifier(w[2])) {
    int k = 0;
    if (!parse_int(w[3], k)) return false;
    if (!run.arg_error) run.arg_error = std::make_pair(std::string(w[2]), k);
    return true;
  }
  if (what == "out-of-bounds" && w.size() == 4 &&
      (w[2] == "input" || w[2] == "output" || w[2] == "workspace" || w[2] == "pool")) {
    int i = 0;
    if (!parse_int(w[3], i)) return false;
    run.out_of_bounds = std::make_pair(std::string(w[2]), i);
    return true;
  }
  if (what == "harness-error" && w.size() == 3) {
    run.harness_error = std::string(w[2]);
    return true;
  }
  if (what == "done" && w.size() == 2) {
    run.completed = true;
    return true;
  }
  return false;
}

}  // namespace

ParsedRun parse_harness_output(std::string_view text) {
  ParsedRun run;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const auto words = split_words(line);
    if (!words.empty() && words[0] == "AOTFUZZ") {
      if (!parse_report(words, run)) run.other_lines.emplace_back(line);
      continue;
    }
    // A trace line of the runtime header: "<name> <num_args>".
    int n = 0;
    if (words.size() == 2 && is_identifier(words[0]) && parse_int(words[1], n) &&
        !run.traces.empty()) {
      run.traces.back().push_back(TraceCall{std::string(words[0]), n});
      continue;
    }
    run.other_lines.emplace_back(line);
  }
  return run;
}

std::vector<reference::Value> output_values(const ParsedRun& run, const ir::Function& main) {
  const auto types = ir::flatten_tensors(main->ret_type());
  std::vector<reference::Value> out;
  for (std::size_t j = 0; j < types.size(); ++j) {
    if (j >= run.printed.size() || !run.printed[j]) {
      throw HarnessError("output " + std::to_string(j) + " was not reported");
    }
    const std::size_t want = aot::tensor_bytes(types[j]);
    if (run.outputs[j].size() != want) {
      throw HarnessError("output " + std::to_string(j) + " has " +
                         std::to_string(run.outputs[j].size()) + " bytes, " +
                         ir::type_to_string(types[j]) + " needs " + std::to_string(want));
    }
    out.push_back(reference::Value::tensor(types[j], run.outputs[j]));
  }
  return out;
}

}  // namespace aotfuzz::oracle
