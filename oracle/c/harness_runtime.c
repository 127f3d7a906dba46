// The harness runtime: buffer set-up, the fault handler and the two runs of one case, with the
// report oracle/harness.h describes, so that a wrong program shows as what went wrong (a write
// into an input, an output left unwritten, a write past a buffer) instead of only wrong bytes.
// One process runs one case at a time, so the fault handler's state is global. Not a translation
// unit of its own: oracle/harness.cc splices it after harness_prologue.h, the runtime header and
// harness_case.h, for the builtin pipeline's programs and TVM's alike.
// Compiled into aotfuzz by cmake/embed_text.cmake, without these // lines.

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
/* The guard pages after the memory pools a foreign harness gives the model (harness_pools.c):
   0 when unused. */
#define AOTFUZZ_MAX_POOLS 8
static uintptr_t pool_guard[AOTFUZZ_MAX_POOLS];
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
  for (i = 0; i < AOTFUZZ_MAX_POOLS; ++i) {
    if (pool_guard[i] != 0 && addr >= pool_guard[i] && addr < pool_guard[i] + page_size) {
      put_text("AOTFUZZ out-of-bounds pool ");
      put_number((uint64_t)i);
      put_text("\n");
      return;
    }
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
