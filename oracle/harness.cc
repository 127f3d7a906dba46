// The harness C program generator and its report parser.
#include "oracle/harness.h"

#include <charconv>
#include <cstdio>

#include "aot/c_writer.h"
#include "aot/runtime_header.h"
#include "aot/storage_plan.h"
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

// The constant part of every harness, single or batched: buffer set-up, the fault handler and the
// two runs of one case, described by a struct aotfuzz_harness_case. One process runs one case, so
// the fault handler's state is global.
constexpr std::string_view kCaseStruct = R"(struct aotfuzz_harness_case {
  int num_inputs;
  int num_outputs;
  const uint8_t* const* input_data;
  const size_t* input_size;
  const size_t* input_elem;
  const size_t* output_size;
  const size_t* output_elem;
  int32_t (*run_once)(uint8_t* const* input_buf, uint8_t* const* output_buf);
};
)";

constexpr std::string_view kRuntimePart = R"(
static size_t page_size;
static int num_inputs;
static int num_outputs;
static const size_t* input_elem;
static uint8_t** input_buf;
static uintptr_t* input_begin;
static size_t* input_span;
static uint8_t** output_buf;
static uintptr_t* output_guard;
static uintptr_t workspace_guard; /* 0 unless the workspace comes from the harness */
#ifdef AOTFUZZ_TRACE
/* The harness's workspace counts its allocations and, for the allocation fault run, refuses
   them. */
static int workspace_allocs;
static int workspace_refused;
#endif

/* Async-signal-safe output for the fault handler. */
static void put_text(const char* s) {
  size_t n = 0;
  ssize_t written;
  while (s[n] != '\0') ++n;
  written = write(1, s, n);
  (void)written;
}

static void put_number(uint64_t v) {
  char buf[24];
  int i = 23;
  buf[i] = '\0';
  do {
    buf[--i] = (char)('0' + (int)(v % 10));
    v /= 10;
  } while (v != 0);
  put_text(buf + i);
}

/* A write into a read-only input page ends the run with a report; any other fault (a guard page,
   anything else) is reported if recognised and then, SA_RESETHAND having restored the default
   action, re-raised by returning to the faulting instruction. */
static void on_fault(int sig, siginfo_t* info, void* context) {
  uintptr_t addr = (uintptr_t)info->si_addr;
  int i;
  (void)sig;
  (void)context;
  for (i = 0; i < num_inputs; ++i) {
    if (addr >= input_begin[i] && addr < input_begin[i] + input_span[i]) {
      put_text("AOTFUZZ input-clobbered ");
      put_number((uint64_t)i);
      put_text(" ");
      put_number((uint64_t)((addr - input_begin[i]) / input_elem[i]));
      put_text("\n");
      _exit(86);
    }
    if (addr >= input_begin[i] + input_span[i] &&
        addr < input_begin[i] + input_span[i] + page_size) {
      put_text("AOTFUZZ out-of-bounds input ");
      put_number((uint64_t)i);
      put_text("\n");
      return;
    }
  }
  for (i = 0; i < num_outputs; ++i) {
    if (addr >= output_guard[i] && addr < output_guard[i] + page_size) {
      put_text("AOTFUZZ out-of-bounds output ");
      put_number((uint64_t)i);
      put_text("\n");
      return;
    }
  }
  if (workspace_guard != 0 && addr >= workspace_guard && addr < workspace_guard + page_size) {
    put_text("AOTFUZZ out-of-bounds workspace 0\n");
    return;
  }
}

/* _exit, not exit: a batch runs each case in a forked child of a process whose exit handlers are
   not the case's to run. */
static void harness_fail(const char* what) {
  printf("AOTFUZZ harness-error %s\n", what);
  fflush(stdout);
  _exit(87);
}

static void* harness_alloc(size_t bytes) {
  void* p = calloc(bytes, 1);
  if (p == NULL) harness_fail("malloc");
  return p;
}

/* Buffers outlive a case: a batch child runs many cases in turn, and fresh mappings per buffer
   would cost each case page faults, mprotect calls and TLB flushes. Slot i of a kind is kept
   while it is large enough. Bytes of a slot outside the case's tensor are zeroed each time, so
   what a stray read sees never depends on the cases run before. */
struct aotfuzz_slot {
  uint8_t* view; /* what the model gets: a slot's span, then one PROT_NONE guard page */
  uint8_t* fill; /* inputs: a writable second mapping of the same pages */
  size_t span;
};
static struct aotfuzz_slot* input_slots;
static struct aotfuzz_slot* output_slots;
static int input_slot_count;
static int output_slot_count;

static size_t span_of(size_t data_len) {
  size_t pages = (data_len + page_size - 1) / page_size;
  return (pages == 0 ? 1 : pages) * page_size;
}

static struct aotfuzz_slot* slot_table(struct aotfuzz_slot** table, int* count, int needed) {
  if (needed > *count) {
    struct aotfuzz_slot* grown =
        (struct aotfuzz_slot*)realloc(*table, sizeof(struct aotfuzz_slot) * (size_t)needed);
    if (grown == NULL) harness_fail("malloc");
    memset(grown + *count, 0, sizeof(struct aotfuzz_slot) * (size_t)(needed - *count));
    *table = grown;
    *count = needed;
  }
  return *table;
}

/* span bytes of PROT_NONE address space plus one more page, the guard. */
static uint8_t* reserve(size_t span) {
  void* p = mmap(NULL, span + page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) harness_fail("mmap");
  return (uint8_t*)p;
}

/* An input's pages, shared between a read-only view (then the guard page) and a writable one,
   so that refilling an input for the next case needs no mprotect. */
static uint8_t* input_slot(int i, const uint8_t* data, size_t size) {
  struct aotfuzz_slot* s = &slot_table(&input_slots, &input_slot_count, i + 1)[i];
  size_t span = span_of(size);
  if (s->span < span) {
    void* view;
    if (s->span != 0) {
      munmap(s->view, s->span + page_size);
      munmap(s->fill, s->span);
    }
    s->fill = (uint8_t*)mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                             0);
    if ((void*)s->fill == MAP_FAILED) harness_fail("mmap");
    s->view = reserve(span);
    view = mremap(s->fill, 0, span, MREMAP_MAYMOVE | MREMAP_FIXED, s->view);
    if (view != (void*)s->view) harness_fail("mremap");
    if (mprotect(s->view, span, PROT_READ) != 0) harness_fail("mprotect");
    s->span = span;
  }
  memcpy(s->fill, data, size);
  memset(s->fill + size, 0, s->span - size);
  return s->view;
}

/* An output buffer ends right before its slot's guard page, so writing past its end faults. */
static uint8_t* output_slot(int i, size_t size, uintptr_t* guard) {
  struct aotfuzz_slot* s = &slot_table(&output_slots, &output_slot_count, i + 1)[i];
  size_t span = span_of(size);
  if (s->span < span) {
    if (s->span != 0) munmap(s->view, s->span + page_size);
    s->view = reserve(span);
    if (mprotect(s->view, span, PROT_READ | PROT_WRITE) != 0) harness_fail("mprotect");
    s->span = span;
  }
  memset(s->view, 0, s->span - size);
  *guard = (uintptr_t)(s->view + s->span);
  return s->view + s->span - size;
}

static void print_hex(const uint8_t* bytes, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  char line[4096];
  size_t used = 0;
  size_t e;
  for (e = 0; e < n; ++e) {
    if (used + 2 > sizeof(line)) {
      fwrite(line, 1, used, stdout);
      used = 0;
    }
    line[used++] = kHex[bytes[e] >> 4];
    line[used++] = kHex[bytes[e] & 15];
  }
  fwrite(line, 1, used, stdout);
}

static void report(const char* line) {
  printf("%s\n", line);
  fflush(stdout);
}

/* input_data: the case's inputs, or NULL for those compiled into the program. */
static int aotfuzz_harness_run(const struct aotfuzz_harness_case* c,
                               const uint8_t* const* input_data) {
  struct sigaction action;
  uint8_t** saved;
  long ps = sysconf(_SC_PAGESIZE);
  int i;
  int rc;
  size_t e;
#ifdef AOTFUZZ_TRACE
  int calls_of_run_1;
  int allocs_of_run_1;
#endif
  page_size = ps > 0 ? (size_t)ps : 4096;
#ifdef AOTFUZZ_TRACE
  aotfuzz_trace_file = stdout;
#endif
  num_inputs = c->num_inputs;
  num_outputs = c->num_outputs;
  input_elem = c->input_elem;
  input_buf = (uint8_t**)harness_alloc(sizeof(uint8_t*) * (size_t)(num_inputs + 1));
  input_begin = (uintptr_t*)harness_alloc(sizeof(uintptr_t) * (size_t)(num_inputs + 1));
  input_span = (size_t*)harness_alloc(sizeof(size_t) * (size_t)(num_inputs + 1));
  output_buf = (uint8_t**)harness_alloc(sizeof(uint8_t*) * (size_t)(num_outputs + 1));
  output_guard = (uintptr_t*)harness_alloc(sizeof(uintptr_t) * (size_t)(num_outputs + 1));
  saved = (uint8_t**)harness_alloc(sizeof(uint8_t*) * (size_t)(num_outputs + 1));
  for (i = 0; i < num_inputs; ++i) {
    input_buf[i] = input_slot(i, (input_data != NULL ? input_data : c->input_data)[i],
                              c->input_size[i]);
    input_begin[i] = (uintptr_t)input_buf[i];
    input_span[i] = input_slots[i].span;
  }
  for (i = 0; i < num_outputs; ++i) {
    output_buf[i] = output_slot(i, c->output_size[i], &output_guard[i]);
    saved[i] = (uint8_t*)harness_alloc(c->output_size[i] + 1);
  }
  memset(&action, 0, sizeof(action));
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGSEGV, &action, NULL) != 0 || sigaction(SIGBUS, &action, NULL) != 0) {
    harness_fail("sigaction");
  }

  for (i = 0; i < num_outputs; ++i) memset(output_buf[i], 0xA5, c->output_size[i]);
  report("AOTFUZZ run 1");
#ifdef AOTFUZZ_TRACE
  aotfuzz_fault_points = 0;
  aotfuzz_fault_countdown = 0;
  workspace_allocs = 0;
#endif
  rc = (int)c->run_once(input_buf, output_buf);
#ifdef AOTFUZZ_TRACE
  calls_of_run_1 = aotfuzz_fault_points;
  allocs_of_run_1 = workspace_allocs;
#endif
  printf("AOTFUZZ rc %d\n", rc);
  fflush(stdout);
  for (i = 0; i < num_outputs; ++i) memcpy(saved[i], output_buf[i], c->output_size[i]);

  for (i = 0; i < num_outputs; ++i) memset(output_buf[i], 0x5A, c->output_size[i]);
  report("AOTFUZZ run 2");
  rc = (int)c->run_once(input_buf, output_buf);
  printf("AOTFUZZ rc %d\n", rc);
  fflush(stdout);

  for (i = 0; i < num_outputs; ++i) {
    for (e = 0; e < c->output_size[i] / c->output_elem[i]; ++e) {
      size_t at = e * c->output_elem[i];
      if (memcmp(saved[i] + at, output_buf[i] + at, c->output_elem[i]) != 0) {
        printf("AOTFUZZ output-unwritten %d %lu\n", i, (unsigned long)e);
        break;
      }
    }
  }
  for (i = 0; i < num_outputs; ++i) {
    printf("AOTFUZZ output %d ", i);
    print_hex(saved[i], c->output_size[i]);
    putchar('\n');
  }
#ifdef AOTFUZZ_TRACE
  /* Fault runs: the first, middle and last call of the model fail in turn; each run must return
     that failure and make no call after it. */
  {
    int calls = calls_of_run_1;
    int fail_at[3];
    int run_no = 3;
    int k;
    fail_at[0] = 1;
    fail_at[1] = (calls + 1) / 2;
    fail_at[2] = calls;
    for (k = 0; k < 3 && calls > 0; ++k) {
      if (k > 0 && fail_at[k] == fail_at[k - 1]) continue;
      printf("AOTFUZZ run %d\n", run_no++);
      fflush(stdout);
      aotfuzz_fault_points = 0;
      aotfuzz_fault_countdown = fail_at[k];
      rc = (int)c->run_once(input_buf, output_buf);
      printf("AOTFUZZ fault %d %d %d\n", fail_at[k], rc, aotfuzz_fault_points - fail_at[k]);
      fflush(stdout);
    }
    aotfuzz_fault_countdown = 0;
    /* The allocation fault run (failed call 0): the workspace cannot be had, as when TVM's
       workspace pool is exhausted; the run must return the failure before any call. */
    if (allocs_of_run_1 > 0) {
      printf("AOTFUZZ run %d\n", run_no++);
      fflush(stdout);
      aotfuzz_fault_points = 0;
      workspace_refused = 1;
      rc = (int)c->run_once(input_buf, output_buf);
      workspace_refused = 0;
      printf("AOTFUZZ fault 0 %d %d\n", rc, aotfuzz_fault_points);
      fflush(stdout);
    }
  }
#endif
  /* A batch runs many cases in one process, and sanitizer builds check for leaks at exit. */
  for (i = 0; i < num_outputs; ++i) free(saved[i]);
  free(saved);
  free(input_buf);
  free(input_begin);
  free(input_span);
  free(output_buf);
  free(output_guard);
  num_inputs = 0;
  num_outputs = 0;
  report("AOTFUZZ done");
  return 0;
}
)";

// The application's side of aotfuzz_runtime.h's workspace (TVM's programs get theirs from TVM's
// runtime): the bytes asked for end right before a guard page, filled with 0xCD so that reading
// storage nobody wrote shows, and one workspace at a time, as one executor run needs.
constexpr std::string_view kWorkspacePart = R"(
static struct aotfuzz_slot workspace_slot;
static void* workspace_given;

void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                               int dtype_code_hint, int dtype_bits_hint) {
  size_t size;
  size_t span;
  (void)device_type;
  (void)device_id;
  (void)dtype_code_hint;
  (void)dtype_bits_hint;
#ifdef AOTFUZZ_TRACE
  ++workspace_allocs;
  if (workspace_refused) return NULL;
#endif
  if (page_size == 0 || nbytes > (uint64_t)1 << 40) return NULL;
  size = (size_t)((nbytes + 7) / 8 * 8);
  span = span_of(size);
  if (workspace_slot.span < span) {
    if (workspace_slot.span != 0) munmap(workspace_slot.view, workspace_slot.span + page_size);
    workspace_slot.view = reserve(span);
    if (mprotect(workspace_slot.view, span, PROT_READ | PROT_WRITE) != 0) {
      harness_fail("mprotect");
    }
    workspace_slot.span = span;
  }
  memset(workspace_slot.view, 0xCD, workspace_slot.span);
  workspace_guard = (uintptr_t)(workspace_slot.view + workspace_slot.span);
  workspace_given = workspace_slot.view + workspace_slot.span - size;
  return workspace_given;
}

int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr) {
  (void)device_type;
  (void)device_id;
  if (ptr == NULL || ptr != workspace_given) return -1;
  workspace_given = NULL;
  return 0;
}
)";

constexpr std::string_view kPrologue = R"(#define _GNU_SOURCE
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
)";

std::string dtype_code(ir::DType dtype) {
  return dtype == ir::DType::kFloat32 ? "kDLFloat" : "kDLInt";
}

}  // namespace

std::string harness_runtime_c() {
  return std::string(kPrologue) + "\n#include \"" + std::string(aot::kRuntimeHeaderName) +
         "\"\n\nAOTFUZZ_DEFINE_TRACE_FILE;\nAOTFUZZ_DEFINE_FAULTS;\n\n" +
         std::string(kCaseStruct) + std::string(kRuntimePart) + std::string(kWorkspacePart);
}

namespace {

constexpr std::string_view kSharedEntry = "aotfuzz_harness_run_case";

// What the runtime header and the generated C take from the C library, declared as glibc does on
// LP64 targets; harness_case_prelude_c's test compiles them together with the real headers,
// where any difference is a conflicting declaration.
constexpr std::string_view kCaseLibc = R"(typedef __SIZE_TYPE__ size_t;
typedef signed char int8_t;
typedef short int int16_t;
typedef int int32_t;
typedef long int int64_t;
typedef unsigned char uint8_t;
typedef unsigned short int uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long int uint64_t;
typedef unsigned long int uintptr_t;
#ifndef NULL
#define NULL ((void*)0)
#endif
typedef struct _IO_FILE FILE;
extern int fprintf(FILE* __restrict __stream, const char* __restrict __format, ...);
extern int fflush(FILE* __stream);
extern void* memset(void* __s, int __c, size_t __n);
extern void* memcpy(void* __restrict __dest, const void* __restrict __src, size_t __n);
)";

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

std::string harness_shared_runtime_c() {
  return harness_runtime_c() + "\nint " + std::string(kSharedEntry) +
         "(const struct aotfuzz_harness_case* c, const uint8_t* const* input_data);\nint " +
         std::string(kSharedEntry) +
         "(const struct aotfuzz_harness_case* c, const uint8_t* const* input_data) {\n"
         "  return aotfuzz_harness_run(c, input_data);\n}\n";
}

std::vector<std::string> harness_runtime_symbols() {
  return {"aotfuzz_trace_file",       "aotfuzz_fault_points",    "aotfuzz_fault_countdown",
          "TVMBackendAllocWorkspace", "TVMBackendFreeWorkspace", std::string(kSharedEntry),
          "fprintf",                  "fflush",                  "memset",
          "memcpy"};
}

std::string harness_case_prelude_c() {
  return std::string(kCaseLibc) + without_system_includes(aot::runtime_header_text()) +
         std::string(kCaseStruct) + "int " + std::string(kSharedEntry) +
         "(const struct aotfuzz_harness_case* c, const uint8_t* const* input_data);\n";
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
                           const std::vector<HarnessInput>& flat_inputs) {
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
  if (options.interface == Options::Interface::kC) {
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

namespace {

// The platform layer of TVM's standalone C runtime, as TVM's AoT tests define it in their main.c,
// with the heap instead of a stack allocator.
constexpr std::string_view kTvmPlatform = R"(
tvm_crt_error_t TVMPlatformMemoryAllocate(size_t num_bytes, DLDevice dev, void** out_ptr) {
  (void)dev;
  *out_ptr = malloc(num_bytes == 0 ? 1 : num_bytes);
  if (*out_ptr == NULL) return kTvmErrorPlatformNoMemory;
  memset(*out_ptr, 0xCD, num_bytes);
  return kTvmErrorNoError;
}

tvm_crt_error_t TVMPlatformMemoryFree(void* ptr, DLDevice dev) {
  (void)dev;
  free(ptr);
  return kTvmErrorNoError;
}

void TVMPlatformAbort(tvm_crt_error_t code) {
  printf("AOTFUZZ tvm-abort %d\n", (int)code);
  fflush(stdout);
  abort();
}

void TVMLogf(const char* msg, ...) {
  va_list args;
  va_start(args, msg);
  vfprintf(stderr, msg, args);
  va_end(args);
}

int TVMFuncRegisterGlobal(const char* name, TVMFunctionHandle f, int override) {
  (void)name;
  (void)f;
  (void)override;
  return 0;
}

void TVMAPISetLastError(const char* msg) { fprintf(stderr, "TVMAPISetLastError: %s\n", msg); }

)";

}  // namespace

std::string tvm_harness_main_c(const aot::Options& options, const std::string& header_name,
                               const std::string& case_part) {
  std::string out = "/* main.c: test harness of TVM's module \"" + options.mod_name +
                    "\" (generated by aotfuzz). */\n";
  out += kPrologue;
  out +=
      "#include <stdarg.h>\n#include <tvm/runtime/c_backend_api.h>\n"
      "#include <tvm/runtime/c_runtime_api.h>\n#include <tvm/runtime/crt/error_codes.h>\n"
      "#include <tvm/runtime/crt/logging.h>\n#include <tvm/runtime/crt/platform.h>\n";
  out += kTvmPlatform;
  out += kCaseStruct;
  out += kRuntimePart;
  const std::string prefix = aot::symbol_prefix(options);
  if (options.interface == Options::Interface::kC) {
    out += "\n#include \"" + header_name + "\"\n\n";
  } else {
    out += "\nint32_t " + prefix +
           "_run(void* args, void* type_code, int num_args, void* out_value, void* out_type_code,"
           " void* resource_handle);\n\n";
  }
  out += case_part;
  out += "\nint main(void) { return aotfuzz_harness_run(&" + std::string(kCasePrefix) +
         "entry, NULL); }\n";
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
      (w[2] == "input" || w[2] == "output" || w[2] == "workspace")) {
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
